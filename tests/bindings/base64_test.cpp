// atob/btoa per the HTML Standard, and the forgiving-base64 decoder per the Infra Standard.
#include "bindings/base64.h"

#include <gtest/gtest.h>

#include <string>

#include "bindings/js_harness.h"

namespace skillbox::bindings {
namespace {

class Base64 : public ::testing::Test {
 protected:
  std::string value(const std::string& source) {
    const testing::JsResult r = js.eval(source);
    EXPECT_TRUE(r.ok) << source << " threw " << r.error;
    return r.value;
  }
  std::string error(const std::string& source) {
    const testing::JsResult r = js.eval(source);
    EXPECT_FALSE(r.ok) << source << " returned " << r.value;
    return r.error;
  }
  // name, code, instanceof Error, realm's own Error.prototype
  std::string dom_error(const std::string& call) {
    return value("try { " + call +
                 "; 'no throw' } catch (e) { [e.name, e.code, e instanceof Error,"
                 " Object.getPrototypeOf(e) === Error.prototype, typeof e.stack].join() }");
  }
  testing::JsHarness js;
};

TEST(Base64Codec, Rfc4648Vectors) {
  const auto enc = [](std::string_view s) {
    return base64_encode(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  };
  EXPECT_EQ(enc(""), "");
  EXPECT_EQ(enc("f"), "Zg==");
  EXPECT_EQ(enc("fo"), "Zm8=");
  EXPECT_EQ(enc("foo"), "Zm9v");
  EXPECT_EQ(enc("foob"), "Zm9vYg==");
  EXPECT_EQ(enc("fooba"), "Zm9vYmE=");
  EXPECT_EQ(enc("foobar"), "Zm9vYmFy");
  EXPECT_EQ(enc(std::string("\xFF\xFE\x00", 3)), "//4A");
}

TEST(Base64Codec, ForgivingDecode) {
  EXPECT_EQ(forgiving_base64_decode("Zm9vYmFy"), "foobar");
  EXPECT_EQ(forgiving_base64_decode("Zm9vYg"), "foob");  // padding optional
  EXPECT_EQ(forgiving_base64_decode("Zm9vYg=="), "foob");
  EXPECT_EQ(forgiving_base64_decode(" Zm9v\tYg==\n\f\r"), "foob");  // ASCII whitespace anywhere
  EXPECT_EQ(forgiving_base64_decode(""), "");
  EXPECT_EQ(forgiving_base64_decode("AB"), std::string(1, '\0'));  // leftover bits are dropped
  EXPECT_EQ(forgiving_base64_decode("/w=="), "\xFF");
  EXPECT_EQ(forgiving_base64_decode("Zm9vYg="), std::nullopt);    // 7 characters: '=' is not data
  EXPECT_EQ(forgiving_base64_decode("Zm9vYg==="), std::nullopt);  // 4n+1
  EXPECT_EQ(forgiving_base64_decode("A"), std::nullopt);
  EXPECT_EQ(forgiving_base64_decode("Zm9v!"), std::nullopt);
  EXPECT_EQ(forgiving_base64_decode("Zm=9v"), std::nullopt);   // '=' only at the end
  EXPECT_EQ(forgiving_base64_decode("Zm9v\v"), std::nullopt);  // vertical tab is not ASCII whitespace
  EXPECT_EQ(forgiving_base64_decode("Zm9v-_"), std::nullopt);  // base64url characters are not accepted
  EXPECT_EQ(forgiving_base64_decode("===="), std::nullopt);
}

TEST_F(Base64, Btoa) {
  EXPECT_EQ(value("[btoa(''), btoa('foobar'), btoa('\\u00ff\\u0000'), btoa('\\u0080')].join()"),
            ",Zm9vYmFy,/wA=,gA==");
  EXPECT_EQ(value("[btoa(42), btoa(null), btoa(undefined), btoa(true)].join()"),
            "NDI=,bnVsbA==,dW5kZWZpbmVk,dHJ1ZQ==");
  EXPECT_EQ(dom_error("btoa('\\u0100')"), "InvalidCharacterError,5,true,true,string");
  EXPECT_EQ(dom_error("btoa('\\ud83d\\ude00')"), "InvalidCharacterError,5,true,true,string");
  EXPECT_EQ(dom_error("btoa('a\\ud800')"), "InvalidCharacterError,5,true,true,string");
  EXPECT_EQ(error("btoa('\\u4e2d')"),
            "InvalidCharacterError: btoa: the string contains a character outside of Latin-1 (above U+00FF)");
  EXPECT_EQ(error("btoa({toString() { return 'x'; }})"),
            "TypeError: btoa: data must be a string, got object");
  EXPECT_EQ(error("btoa()"), "TypeError: btoa: 1 argument required, but only 0 present");
}

TEST_F(Base64, Atob) {
  EXPECT_EQ(value("[atob('Zm9vYmFy'), atob(' Zm9v Yg '), atob('')].join()"), "foobar,foob,");
  EXPECT_EQ(value("Array.from(atob('/wA='), c => c.charCodeAt(0)).join()"), "255,0");
  EXPECT_EQ(value("Array.from(atob(null), c => c.charCodeAt(0)).join()"), "158,233,101");  // "null" is base64
  EXPECT_EQ(dom_error("atob(undefined)"), "InvalidCharacterError,5,true,true,string");     // 9 characters
  EXPECT_EQ(dom_error("atob('Zm9vYg=')"), "InvalidCharacterError,5,true,true,string");
  EXPECT_EQ(dom_error("atob('Zm9v\\u00e9')"), "InvalidCharacterError,5,true,true,string");
  EXPECT_EQ(error("atob('@@@@')"), "InvalidCharacterError: atob: the string is not correctly encoded base64");
  EXPECT_EQ(error("atob([])"), "TypeError: atob: data must be a string, got array");
}

TEST_F(Base64, RoundTripOfEveryByte) {
  EXPECT_EQ(value("let s = ''; for (let i = 0; i < 256; i++) s += String.fromCharCode(i);"
                  "atob(btoa(s)) === s && btoa(s).length === 344"),
            "true");
  EXPECT_EQ(value("const s = 'ab\\u00e7'.repeat(100000); atob(btoa(s)) === s"), "true");
}

}  // namespace
}  // namespace skillbox::bindings
