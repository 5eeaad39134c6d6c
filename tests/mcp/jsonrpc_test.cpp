// mcp/jsonrpc.cpp: which texts are requests, notifications and responses, and the error each bad one gets.
#include "mcp/jsonrpc.h"

#include <gtest/gtest.h>

namespace skillbox::mcp {
namespace {

using json = nlohmann::json;

TEST(McpJsonRpc, ReadsRequestsNotificationsAndResponses) {
  auto r = parse_message(R"({"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x"}})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, Message::Kind::request);
  EXPECT_EQ(r->id, "a");
  EXPECT_EQ(r->method, "tools/call");
  EXPECT_EQ(r->params, json({{"name", "x"}}));

  auto n = parse_message(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->kind, Message::Kind::notification);
  EXPECT_TRUE(n->params.is_null());

  auto resp = parse_message(R"({"jsonrpc":"2.0","id":3,"result":{}})");
  ASSERT_TRUE(resp);
  EXPECT_EQ(resp->kind, Message::Kind::response);
}

TEST(McpJsonRpc, IdsAreStringsOrExactIntegers) {
  EXPECT_TRUE(valid_id(json(0)));
  EXPECT_TRUE(valid_id(json(kMaxIntegerId)));
  EXPECT_TRUE(valid_id(json(-kMaxIntegerId)));
  EXPECT_FALSE(valid_id(json(kMaxIntegerId + 1)));
  EXPECT_FALSE(valid_id(json(uint64_t{1} << 63)));
  EXPECT_TRUE(valid_id(json(std::string(kMaxIdBytes, 'x'))));
  EXPECT_FALSE(valid_id(json(std::string(kMaxIdBytes + 1, 'x'))));
  EXPECT_FALSE(valid_id(json(1.0)));
  EXPECT_FALSE(valid_id(json(nullptr)));
  EXPECT_FALSE(valid_id(json(true)));
  EXPECT_FALSE(valid_id(json::array()));
  EXPECT_FALSE(valid_id(json::object()));
}

TEST(McpJsonRpc, AnInvalidRequestKeepsAValidId) {
  auto r = parse_message(R"({"jsonrpc":"2.0","id":9,"method":1})");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::invalid_request);
  EXPECT_EQ(r.error().id, 9);
  auto bad_id = parse_message(R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})");
  ASSERT_FALSE(bad_id);
  EXPECT_TRUE(bad_id.error().id.is_null());
}

TEST(McpJsonRpc, OutgoingMessagesAreOneLine) {
  const std::string text = response_text(1, {{"text", "a\nb\r\u2028"}});
  EXPECT_EQ(text.find('\n'), std::string::npos) << text;
  EXPECT_EQ(json::parse(text)["result"]["text"], "a\nb\r\u2028");
  const std::string error = error_text(nullptr, ErrorCode::parse_error, "line\nbreak");
  EXPECT_EQ(error.find('\n'), std::string::npos);
  EXPECT_EQ(
      json::parse(error),
      json({{"jsonrpc", "2.0"}, {"id", nullptr}, {"error", {{"code", -32700}, {"message", "line\nbreak"}}}}));
  // A lone surrogate a skill's value may hold (WTF-8, base/json_text.h) is written as its escape.
  const std::string lone = notification_text("m", {{"data", std::string("\xed\xa0\x80")}});
  EXPECT_NE(lone.find("\\ud800"), std::string::npos) << lone;
}

}  // namespace
}  // namespace skillbox::mcp
