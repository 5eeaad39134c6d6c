#include "capabilities/http/request_check.h"

#include <gtest/gtest.h>

namespace skillbox::capabilities::http {
namespace {

std::string method(std::string_view m) {
  auto r = normalize_method(m);
  if (!r) return std::string(bus::error_name(r.error().code)) + ": " + r.error().message;
  return *r;
}

std::string headers(const std::vector<Header>& h) {
  auto r = check_request_headers(h);
  if (!r) return std::string(bus::error_name(r.error().code)) + ": " + r.error().message;
  std::string out;
  for (const auto& [n, v] : *r) out += n + "=" + v + ";";
  return out;
}

TEST(RequestCheck, NormalisesMethodsLikeFetch) {
  EXPECT_EQ(method("get"), "GET");
  EXPECT_EQ(method("Post"), "POST");
  EXPECT_EQ(method("patch"), "PATCH");
  EXPECT_EQ(method("PROPFIND"), "PROPFIND");
  EXPECT_EQ(method("propfind"), "propfind");  // unknown methods keep their case
  EXPECT_EQ(method("CONNECT"), "InvalidArgument: method CONNECT is never allowed");
  EXPECT_EQ(method("trace"), "InvalidArgument: method TRACE is never allowed");
  EXPECT_EQ(method("TRACK"), "InvalidArgument: method TRACK is never allowed");
  EXPECT_EQ(method(""), "InvalidArgument: method is empty");
  EXPECT_EQ(method("GET /evil HTTP/1.1\r\n"),
            "InvalidArgument: method \"GET /evil HTTP/1.1\\x0d\\x0a\" is not a "
            "valid HTTP token");
  EXPECT_EQ(method(std::string(33, 'A')), "InvalidArgument: method is longer than 32 bytes");
}

TEST(RequestCheck, RefusesInjectionInHeaderValues) {
  EXPECT_EQ(
      headers({{"X-A", "1\r\nX-Injected: 2"}}),
      "InvalidArgument: request header \"X-A\" contains a control character (CR, LF, NUL, ...) at offset 1");
  EXPECT_EQ(headers({{"X-A", "a\nb"}}).rfind("InvalidArgument: request header \"X-A\" contains a control", 0),
            0u);
  EXPECT_EQ(headers({{"X-A", std::string("a\0b", 3)}}).rfind("InvalidArgument", 0), 0u);
  EXPECT_EQ(headers({{"X-A", "a\x7f"}}).rfind("InvalidArgument", 0), 0u);
  EXPECT_EQ(headers({{"X-A", "tab\there"}}), "X-A=tab\there;");
  EXPECT_EQ(headers({{"X-A", "  padded \t"}, {"X-Empty", "   "}}), "X-A=padded;X-Empty=;");
  EXPECT_EQ(headers({{"X-Utf8", "caf\xc3\xa9"}}), "X-Utf8=caf\xc3\xa9;");
}

TEST(RequestCheck, RefusesHostFramingHopByHopAndProxyHeaders) {
  for (const char* name : {"Host", "host", "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive",
                           "TE", "Trailer", "Upgrade", "Proxy-Authorization", "proxy-connection",
                           "HTTP2-Settings", "Expect", "Accept-Encoding"}) {
    EXPECT_EQ(headers({{name, "x"}}),
              std::string("InvalidArgument: request header \"") + name +
                  "\" is set by skillbox and may not be given (Host, framing, hop-by-hop "
                  "and proxy headers are refused)");
  }
  EXPECT_EQ(
      headers({{"Authorization", "Bearer t"}, {"Content-Type", "application/json"}, {"User-Agent", "me"}}),
      "Authorization=Bearer t;Content-Type=application/json;User-Agent=me;");
}

TEST(RequestCheck, RefusesHeaderNamesThatAreNotTokens) {
  EXPECT_EQ(headers({{"", "x"}}), "InvalidArgument: request header name \"\" is not a valid HTTP token");
  EXPECT_EQ(headers({{"X A", "x"}}),
            "InvalidArgument: request header name \"X A\" is not a valid HTTP token");
  EXPECT_EQ(headers({{"X:A", "x"}}).rfind("InvalidArgument: request header name", 0), 0u);
  EXPECT_EQ(
      headers({{"X-A\r\nHost", "x"}}).rfind("InvalidArgument: request header name \"X-A\\x0d\\x0aHost\"", 0),
      0u);
}

TEST(RequestCheck, CapsHeaderCountAndSize) {
  std::vector<Header> many(kMaxRequestHeaders + 1, {"X-A", "1"});
  EXPECT_EQ(headers(many), "PayloadTooLarge: 101 request headers; the limit is 100");
  many.pop_back();
  EXPECT_EQ(headers(many).rfind("X-A=1;", 0), 0u);
  EXPECT_EQ(headers({{"X-Big", std::string(kMaxRequestHeaderBytes, 'b')}}),
            "PayloadTooLarge: request headers exceed 32768 bytes in total");
}

}  // namespace
}  // namespace skillbox::capabilities::http
