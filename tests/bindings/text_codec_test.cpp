// TextEncoder and TextDecoder as a skill sees them (WHATWG Encoding Standard, UTF-8).
#include "bindings/text_codec.h"

#include <gtest/gtest.h>

#include <string>

#include "bindings/js_harness.h"
#include "bindings/owners.h"

namespace skillbox::bindings {
namespace {

class TextCodec : public ::testing::Test {
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
  testing::JsHarness js;
};

TEST_F(TextCodec, EncoderIsAProperClass) {
  EXPECT_EQ(value("const te = new TextEncoder();"
                  "[typeof TextEncoder, te.encoding, te instanceof TextEncoder,"
                  " Object.getPrototypeOf(te) === TextEncoder.prototype, TextEncoder.prototype.constructor "
                  "=== TextEncoder,"
                  " Object.prototype.toString.call(te), TextEncoder.name, TextEncoder.length,"
                  " Object.keys(te).length, 'encoding' in te, te.hasOwnProperty('encoding')]"),
            R"(["function","utf-8",true,true,true,"[object TextEncoder]","TextEncoder",0,0,true,false])");
  EXPECT_EQ(error("TextEncoder()"), "TypeError: must be called with new");
  EXPECT_EQ(error("TextEncoder.prototype.encode.call({}, 'x')"),
            "TypeError: TextEncoder.encode: Illegal invocation (the receiver is not a TextEncoder)");
  EXPECT_EQ(
      error("Object.getOwnPropertyDescriptor(TextEncoder.prototype, 'encoding').get.call(new TextDecoder())"),
      "TypeError: TextEncoder.encoding: Illegal invocation (the receiver is not a TextEncoder)");
  EXPECT_EQ(error("TextEncoder.prototype.encodeInto.call(Object.create(TextEncoder.prototype), '', new "
                  "Uint8Array(1))"),
            "TypeError: TextEncoder.encodeInto: Illegal invocation (the receiver is not a TextEncoder)");
  EXPECT_EQ(value("class MyEncoder extends TextEncoder { tag() { return 't'; } }"
                  "const m = new MyEncoder(); [m instanceof MyEncoder, m instanceof TextEncoder, m.tag(), "
                  "m.encode('a')[0]]"),
            "[true,true,\"t\",97]");
  EXPECT_EQ(value("const d = Object.getOwnPropertyDescriptor(TextEncoder, 'prototype'); [d.writable, "
                  "d.configurable]"),
            "[false,false]");
}

TEST_F(TextCodec, Encode) {
  EXPECT_EQ(value("Array.from(new TextEncoder().encode('a\\u00e9\\u4e2d\\ud83d\\ude00')).join()"),
            "97,195,169,228,184,173,240,159,152,128");
  EXPECT_EQ(value("const r = new TextEncoder().encode(); [Object.prototype.toString.call(r), r.length]"),
            R"(["[object Uint8Array]",0])");
  EXPECT_EQ(value("new TextEncoder().encode(undefined).length"), "0");
  EXPECT_EQ(value("Array.from(new TextEncoder().encode('\\ud800x\\udc00')).join()"),
            "239,191,189,120,239,191,189");
  EXPECT_EQ(value("const te = new TextEncoder(); [te.encode(null).length, te.encode(123).length, "
                  "te.encode(true).length]"),
            "[4,3,4]");
  EXPECT_EQ(error("new TextEncoder().encode({toString() { return 'x'; }})"),
            "TypeError: TextEncoder.encode: input must be a string, got object");
  EXPECT_EQ(error("new TextEncoder().encode(Symbol())"),
            "TypeError: TextEncoder.encode: input must be a string, got symbol");
  // The result is a genuine Uint8Array even when the skill replaced the global.
  EXPECT_EQ(
      value("const Real = Uint8Array; globalThis.Uint8Array = function Fake() {};"
            "const r = new TextEncoder().encode('hi'); [r instanceof Real, r.length, r.buffer.byteLength]"),
      "[true,2,2]");
}

TEST_F(TextCodec, EncodeInto) {
  EXPECT_EQ(value("const d = new Uint8Array(5); const r = new TextEncoder().encodeInto('a\\u00e9\\u4e2d', d);"
                  "[r.read, r.written, Array.from(d).join()]"),
            R"([2,3,"97,195,169,0,0"])");
  EXPECT_EQ(value("const r = new TextEncoder().encodeInto('\\ud83d\\ude00x', new Uint8Array(4)); [r.read, "
                  "r.written]"),
            "[2,4]");
  EXPECT_EQ(
      value(
          "const r = new TextEncoder().encodeInto('\\ud83d\\ude00', new Uint8Array(3)); [r.read, r.written]"),
      "[0,0]");
  EXPECT_EQ(
      value("const r = new TextEncoder().encodeInto('\\ud800', new Uint8Array(3)); [r.read, r.written]"),
      "[1,3]");
  EXPECT_EQ(value("const b = new Uint8Array(6); new TextEncoder().encodeInto('hi', b.subarray(2)); "
                  "Array.from(b).join()"),
            "0,0,104,105,0,0");
  EXPECT_EQ(value("JSON.stringify(new TextEncoder().encodeInto('', new Uint8Array(0)))"),
            R"({"read":0,"written":0})");
  EXPECT_EQ(error("new TextEncoder().encodeInto('x', new Int8Array(1))"),
            "TypeError: TextEncoder.encodeInto: destination must be a Uint8Array, got Int8Array");
  EXPECT_EQ(error("new TextEncoder().encodeInto('x')"),
            "TypeError: TextEncoder.encodeInto: 2 arguments required, but only 1 present");
}

// text_codec.cpp writes through the destination's ByteView (a const_cast): that memory is the
// ArrayBuffer's own storage from JS_GetArrayBuffer, seen by every view of the buffer, and a detached
// buffer has no bytes.
TEST_F(TextCodec, EncodeIntoWritesTheCallersBuffer) {
  EXPECT_EQ(value("const b = new ArrayBuffer(8); const r = new TextEncoder().encodeInto('hi\\u00e9', "
                  "new Uint8Array(b, 2, 4)); const dv = new DataView(b);"
                  "[r.written, Array.from(new Uint8Array(b)).join(), dv.getUint8(2), dv.getUint8(5)]"),
            R"([4,"0,0,104,105,195,169,0,0",104,169])");
  // Skills cannot detach buffers in this engine; the host can, and nothing may be written then.
  js.eval("globalThis.d = new Uint8Array(8)");
  const Value global(js.ctx(), JS_GetGlobalObject(js.ctx()));
  const Value d = property(js.ctx(), global.get(), "d");
  size_t offset = 0, length = 0, element = 0;
  const Value buffer(js.ctx(), JS_GetTypedArrayBuffer(js.ctx(), d.get(), &offset, &length, &element));
  JS_DetachArrayBuffer(js.ctx(), buffer.get());
  EXPECT_EQ(value("JSON.stringify(new TextEncoder().encodeInto('hi', d))"), R"({"read":0,"written":0})");
}

TEST_F(TextCodec, DecoderIsAProperClass) {
  EXPECT_EQ(
      value("const td = new TextDecoder(); [td.encoding, td.fatal, td.ignoreBOM, td instanceof TextDecoder,"
            " Object.prototype.toString.call(td), TextDecoder.prototype.constructor === TextDecoder]"),
      R"(["utf-8",false,false,true,"[object TextDecoder]",true])");
  EXPECT_EQ(value("const td = new TextDecoder(' UTF8\\n', {fatal: 1, ignoreBOM: 'yes'}); [td.encoding, "
                  "td.fatal, td.ignoreBOM]"),
            R"(["utf-8",true,true])");
  for (const char* label : {"utf-8", "UTF-8", "utf8", "unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8",
                            "x-unicode20utf8", "\t utf-8 \f"})
    EXPECT_EQ(value(std::string("new TextDecoder(") + "'" + label + "').encoding"), "utf-8") << label;
  EXPECT_EQ(
      error("new TextDecoder('latin1')"),
      "RangeError: TextDecoder: the encoding label \"latin1\" is not supported; only \"utf-8\" is available");
  EXPECT_EQ(error("new TextDecoder('utf-16le')").substr(0, 11), "RangeError:");
  EXPECT_EQ(error("TextDecoder()"), "TypeError: must be called with new");
  EXPECT_EQ(error("TextDecoder.prototype.decode.call(new TextEncoder())"),
            "TypeError: TextDecoder.decode: Illegal invocation (the receiver is not a TextDecoder)");
  EXPECT_EQ(error("Object.getOwnPropertyDescriptor(TextDecoder.prototype, 'fatal').get.call({})"),
            "TypeError: TextDecoder.fatal: Illegal invocation (the receiver is not a TextDecoder)");
  EXPECT_EQ(error("new TextDecoder({toString() { return 'utf-8'; }})"),
            "TypeError: TextDecoder: label must be a string, got object");
  EXPECT_EQ(error("new TextDecoder('utf-8', 'fatal')"),
            "TypeError: TextDecoder: options must be an object, got string");
}

TEST_F(TextCodec, DecodeInputs) {
  EXPECT_EQ(
      value(
          "const td = new TextDecoder(); [td.decode(), td.decode(undefined), td.decode(new Uint8Array(0))]"),
      R"(["","",""])");
  EXPECT_EQ(value("new TextDecoder().decode(new Uint8Array([104, 105]))"), "hi");
  EXPECT_EQ(value("new TextDecoder().decode(new Uint8Array([0, 104, 105, 0]).buffer)"),
            std::string("\0hi\0", 4));
  EXPECT_EQ(value("new TextDecoder().decode(new DataView(new Uint8Array([1, 104, 105, 2]).buffer, 1, 2))"),
            "hi");
  EXPECT_EQ(value("new TextDecoder().decode(new Uint8Array([120, 104, 105, 121]).subarray(1, 3))"), "hi");
  EXPECT_EQ(value("new TextDecoder().decode(new Uint16Array([0x6968]))"), "hi");
  EXPECT_EQ(
      error("new TextDecoder().decode('hi')"),
      "TypeError: TextDecoder.decode: input must be an ArrayBuffer, a TypedArray or a DataView, got string");
  EXPECT_EQ(
      error("new TextDecoder().decode([104])"),
      "TypeError: TextDecoder.decode: input must be an ArrayBuffer, a TypedArray or a DataView, got array");
  EXPECT_EQ(error("new TextDecoder().decode(new Uint8Array(1), {get stream() { throw 1; }})"),
            "TypeError: TextDecoder.decode: reading options.stream threw an exception");
}

TEST_F(TextCodec, InvalidInputBecomesReplacementCharacters) {
  // One U+FFFD per maximal ill-formed subsequence (Encoding Standard; Unicode "best practice").
  const auto decode = [&](const std::string& bytes) {
    return value("Array.from(new TextDecoder().decode(new Uint8Array([" + bytes +
                 "])), c => c.codePointAt(0).toString(16)).join(' ')");
  };
  EXPECT_EQ(decode("0xff, 0x61"), "fffd 61");
  EXPECT_EQ(decode("0xe2, 0x82"), "fffd");                             // truncated at the end
  EXPECT_EQ(decode("0xe2, 0x82, 0x61"), "fffd 61");                    // truncated, then ASCII
  EXPECT_EQ(decode("0xc0, 0x80"), "fffd fffd");                        // overlong
  EXPECT_EQ(decode("0xe0, 0x80, 0x80"), "fffd fffd fffd");             // overlong 3-byte
  EXPECT_EQ(decode("0xed, 0xa0, 0x80"), "fffd fffd fffd");             // an encoded surrogate
  EXPECT_EQ(decode("0xf4, 0x90, 0x80, 0x80"), "fffd fffd fffd fffd");  // above U+10FFFF
  EXPECT_EQ(decode("0xf0, 0x9f, 0x98, 0x61"), "fffd 61");
  EXPECT_EQ(decode("0x80, 0xbf"), "fffd fffd");  // lone continuation bytes
  EXPECT_EQ(decode("0xf0, 0x9f, 0x98, 0x80"), "1f600");
  EXPECT_EQ(value("new TextDecoder('utf-8', {fatal: true}).decode(new Uint8Array([0xe4, 0xb8, 0xad]))"),
            "\xE4\xB8\xAD");
  EXPECT_EQ(error("new TextDecoder('utf-8', {fatal: true}).decode(new Uint8Array([0x61, 0xff]))"),
            "TypeError: TextDecoder.decode: the input is not valid UTF-8 (the decoder is fatal)");
  EXPECT_EQ(value("try { new TextDecoder('utf-8', {fatal: true}).decode(new Uint8Array([0xc3])) } catch (e) {"
                  " e instanceof TypeError }"),
            "true");
}

TEST_F(TextCodec, ByteOrderMark) {
  EXPECT_EQ(value("new TextDecoder().decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x61])) === 'a'"), "true");
  EXPECT_EQ(
      value("new TextDecoder('utf-8', {ignoreBOM: true}).decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x61])) ==="
            " '\\ufeffa'"),
      "true");
  EXPECT_EQ(value("new TextDecoder().decode(new Uint8Array([0x61, 0xef, 0xbb, 0xbf])) === 'a\\ufeff'"),
            "true");
  EXPECT_EQ(
      value("new TextDecoder().decode(new Uint8Array([0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf])) === '\\ufeff'"),
      "true");
}

TEST_F(TextCodec, Streaming) {
  EXPECT_EQ(value("const td = new TextDecoder(); const parts = [td.decode(new Uint8Array([0xef, 0xbb]), "
                  "{stream: true}),"
                  " td.decode(new Uint8Array([0xbf, 0xe4, 0xb8]), {stream: true}), td.decode(new "
                  "Uint8Array([0xad]))];"
                  "parts.join('|')"),
            "||\xE4\xB8\xAD");
  // After a flush the next stream starts afresh (its BOM is dropped again).
  EXPECT_EQ(value("const td = new TextDecoder(); td.decode(new Uint8Array([0xe4]), {stream: true});"
                  "const a = td.decode(); const b = td.decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x62]));"
                  "[a === '\\ufffd', b]"),
            R"([true,"b"])");
}

TEST_F(TextCodec, RoundTrips) {
  EXPECT_EQ(value("let s = ''; for (let c = 0; c < 0x110000; c += 37) if (c < 0xd800 || c > 0xdfff)"
                  " s += String.fromCodePoint(c);"
                  "new TextDecoder('utf-8', {fatal: true}).decode(new TextEncoder().encode(s)) === s"),
            "true");
  EXPECT_EQ(value("const s = 'x'.repeat(1 << 20) + '\\u00e9'; new TextDecoder().decode(new "
                  "TextEncoder().encode(s)) === s"),
            "true");
  // Lone surrogates do not survive (they cannot be encoded); everything else does.
  EXPECT_EQ(value("new TextDecoder().decode(new TextEncoder().encode('a\\udc00b')) === 'a\\ufffdb'"), "true");
}

}  // namespace
}  // namespace skillbox::bindings
