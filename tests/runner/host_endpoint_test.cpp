// Host composition: which capability answers which request, and what the endpoint reports.
#include "runner/host_endpoint.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <variant>

namespace skillbox::runner {
namespace {

class NoCompletions final : public bus::CompletionSink {
 public:
  void complete(uint64_t, bus::Reply) override { ADD_FAILURE() << "no asynchronous request was sent"; }
};

// Converts to a string by throwing: emplacing a request from it leaves the variant without a type.
struct ThrowsOnConversion {
  operator std::string() const { throw std::runtime_error("conversion failed"); }  // NOLINT
};

TEST(HostEndpoint, ARequestWithoutATypeIsAnInternalErrorServedByNoCapability) {
  NoCompletions sink;
  HostEndpoint endpoint(
      InvocationContext{.skill_id = "test", .policy = {}, .data_dir = {}, .env = {}, .extra_ca_file = {}},
      sink);
  bus::Request request = bus::LogRequest{bus::LogLevel::info, "x"};
  try {
    request.emplace<bus::EnvGetRequest>(ThrowsOnConversion{});
  } catch (const std::runtime_error&) {
  }
  ASSERT_TRUE(request.valueless_by_exception());
  std::optional<bus::Reply> reply = endpoint.send(1, std::move(request));
  ASSERT_TRUE(reply);
  const auto* error = std::get_if<bus::ErrorReply>(&*reply);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->code, bus::ErrorCode::IoError);
  EXPECT_EQ(error->message.rfind("internal error: ", 0), 0u) << error->message;
  EXPECT_TRUE(endpoint.take_logs().empty());
  EXPECT_EQ(endpoint.counters().host_calls.load(), 1u);
}

TEST(HostEndpoint, EnvNotesGoToTheRunsLogAndTheReportCarriesLogsAndCounters) {
  NoCompletions sink;
  InvocationContext context;
  context.skill_id = "test";
  context.policy.env = {"GRANTED"};
  context.env = {{"GRANTED", "value"}};
  HostEndpoint endpoint(std::move(context), sink);
  EXPECT_EQ(std::get<bus::OptionalStringReply>(*endpoint.send(1, bus::EnvGetRequest{"GRANTED"})).value,
            "value");
  EXPECT_EQ(std::get<bus::OptionalStringReply>(*endpoint.send(2, bus::EnvGetRequest{"OTHER"})).value,
            std::nullopt);
  EXPECT_TRUE(
      std::holds_alternative<bus::OkReply>(*endpoint.send(3, bus::LogRequest{bus::LogLevel::info, "hello"})));
  endpoint.cancel_all();
  RunResult result;
  endpoint.report(result);
  EXPECT_EQ(result.usage.host_calls, 3u);
  ASSERT_EQ(result.logs.size(), 2u);
  EXPECT_EQ(result.logs[0].level, LogEntry::Level::debug);
  EXPECT_NE(result.logs[0].message.find("permissions.env"), std::string::npos) << result.logs[0].message;
  EXPECT_EQ(result.logs[1].message, "hello");
}

}  // namespace
}  // namespace skillbox::runner
