// The `env` binding: requests, replies and hostile names (tests/bindings/js_harness.h FakeBridge).
#include "bindings/env.h"

#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "bindings/js_harness.h"

namespace skillbox::bindings {
namespace {

class EnvBinding : public ::testing::Test {
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

TEST_F(EnvBinding, GetReturnsTheGrantedValueOrUndefined) {
  js.bridge.responder = [](const bus::Request& r) -> bus::Reply {
    const auto* get = std::get_if<bus::EnvGetRequest>(&r);
    if (get != nullptr && get->name == "API_KEY") return bus::OptionalStringReply{"k-123 é"};
    return bus::OptionalStringReply{};
  };
  EXPECT_EQ(value("[env.get('API_KEY'), env.get('HOME') === undefined, env === openhuman.env,"
                  " env.get.length, env.get.constructor.constructor === Function]"),
            R"(["k-123 é",true,true,1,true])");
}

TEST_F(EnvBinding, NamesAreStringPrimitivesPassedUnchanged) {
  js.bridge.responder = [](const bus::Request&) { return bus::Reply{bus::OptionalStringReply{}}; };
  value("env.get('A\\0B')");
  const auto* get = std::get_if<bus::EnvGetRequest>(&js.bridge.requests.back());
  ASSERT_NE(get, nullptr);
  EXPECT_EQ(get->name, std::string("A\0B", 3)) << "NUL kept: the capability refuses it";

  const size_t before = js.bridge.requests.size();
  EXPECT_EQ(
      value("globalThis.ran = 0;"
            "const names = [42, null, undefined, {toString() { ran++; return 'API_KEY' }},"
            " new Proxy({}, {get() { ran++; return () => 'API_KEY' }}), new String('API_KEY'), Symbol()];"
            "const r = names.map(n => { try { env.get(n); return 'none' } catch (e) {"
            " return e instanceof TypeError } });"
            "[ran, r.every(x => x === true)]"),
      "[0,true]");
  EXPECT_EQ(js.bridge.requests.size(), before);
  EXPECT_EQ(error("env.get({})"), "TypeError: env.get: name must be a string, got object");
  EXPECT_EQ(error("env.get()").rfind("TypeError: env.get: 1 argument", 0), 0u);
}

TEST_F(EnvBinding, ErrorRepliesAreHostErrors) {
  js.bridge.responder = [](const bus::Request&) {
    return bus::Reply{bus::ErrorReply{bus::ErrorCode::InvalidArgument, "env.get: the name contains '='"}};
  };
  EXPECT_EQ(
      value("try { env.get('A=B') } catch (e) { [e.name, e.code, e.message, e instanceof Error].join('|') }"),
      "InvalidArgument|EINVAL|env.get: the name contains '='|true");
}

}  // namespace
}  // namespace skillbox::bindings
