// Host composition: which capability answers which request, and what the endpoint reports.
#include "runner/host_endpoint.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "capabilities/store/store_test_util.h"
#include "state/local_backends.h"

namespace skillbox::runner {
namespace {

class NoCompletions final : public bus::CompletionSink {
 public:
  void complete(uint64_t, bus::Reply) override { ADD_FAILURE() << "no asynchronous request was sent"; }
};

// Converts to a request by throwing: emplacing a request from it leaves the variant without a type.
// (A conversion operator rather than aggregate initialization from it, which clang 14 does not do.)
struct ThrowsOnConversion {
  operator bus::EnvGetRequest() const { throw std::runtime_error("conversion failed"); }  // NOLINT
};

TEST(HostEndpoint, ARequestWithoutATypeIsAnInternalErrorServedByNoCapability) {
  NoCompletions sink;
  HostEndpoint endpoint(InvocationContext{.skill_id = "test",
                                          .policy = {},
                                          .state = {},
                                          .env = {},
                                          .extra_ca_file = {},
                                          .credentials = {},
                                          .setup_modes = {},
                                          .origin_map = {},
                                          .trusted_endpoints = {}},
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

// ---- nothing happens after a limit (issue 9, item 2) -----------------------------------------------------

InvocationContext stop_context(const std::filesystem::path& data_dir) {
  InvocationContext c;
  c.skill_id = "stopper";
  c.policy.fs.mode = FsMode::readwrite;
  c.policy.env = {"GRANTED"};
  c.env = {{"GRANTED", "value"}};
  c.state = state::make_local_backends(state::DataLayout(data_dir), {});
  return c;
}

bus::Bytes bytes(const std::string& s) {
  return {s.begin(), s.end()};
}

void expect_stopped(const std::optional<bus::Reply>& reply) {
  ASSERT_TRUE(reply);
  const auto* error = std::get_if<bus::ErrorReply>(&*reply);
  ASSERT_NE(error, nullptr) << "a request was served after the invocation had to stop";
  EXPECT_EQ(error->code, bus::ErrorCode::Timeout);
  EXPECT_NE(error->message.find("served nothing"), std::string::npos) << error->message;
}

// The state every stopped endpoint below must leave untouched.
void prepare(const std::filesystem::path& data_dir) {
  NoCompletions sink;
  HostEndpoint endpoint(stop_context(data_dir), sink);
  ASSERT_TRUE(std::holds_alternative<bus::OkReply>(*endpoint.send(1, bus::StoreSetRequest{"a", "1"})));
  ASSERT_TRUE(std::holds_alternative<bus::OkReply>(*endpoint.send(2, bus::FsMkdirRequest{"d", false})));
  ASSERT_TRUE(std::holds_alternative<bus::OkReply>(
      *endpoint.send(3, bus::FsWriteFileRequest{"d/f", bytes("old"), false})));
}

// Every kind of request, each of which would change something or answer something if served.
void send_everything(HostEndpoint& endpoint) {
  expect_stopped(endpoint.send(1, bus::StoreSetRequest{"b", "2"}));
  expect_stopped(endpoint.send(2, bus::StoreDeleteRequest{"a"}));
  expect_stopped(endpoint.send(3, bus::StoreGetRequest{"a"}));
  expect_stopped(endpoint.send(4, bus::FsWriteFileRequest{"d/f", bytes("new"), true}));
  expect_stopped(endpoint.send(5, bus::FsRemoveRequest{"d", true}));
  expect_stopped(endpoint.send(6, bus::FsMkdirRequest{"e", false}));
  expect_stopped(endpoint.send(7, bus::EnvGetRequest{"GRANTED"}));
  expect_stopped(endpoint.send(8, bus::LogRequest{bus::LogLevel::info, "after the limit"}));
  bus::HttpRequest http;
  http.method = "GET";
  http.url = "http://127.0.0.1:9/";
  expect_stopped(endpoint.send(9, std::move(http)));
}

void expect_unchanged(const std::filesystem::path& data_dir) {
  NoCompletions sink;
  HostEndpoint endpoint(stop_context(data_dir), sink);
  EXPECT_EQ(std::get<bus::StringListReply>(*endpoint.send(1, bus::StoreKeysRequest{})).values,
            std::vector<std::string>{"a"});
  const auto content = std::get<bus::BytesReply>(*endpoint.send(2, bus::FsReadFileRequest{"d/f"}));
  EXPECT_EQ(std::string(content.data.begin(), content.data.end()), "old");
  EXPECT_FALSE(std::get<bus::BoolReply>(*endpoint.send(3, bus::FsExistsRequest{"e"})).value);
}

TEST(HostEndpoint, OnceALimitTrippedNoRequestIsServedByAnyCapability) {
  testing::TempDir data;
  prepare(data.path());
  bus::StopToken stop;  // no deadline: only raise() stops it
  NoCompletions sink;
  HostEndpoint endpoint(stop_context(data.path()), sink, stop);
  EXPECT_TRUE(
      std::holds_alternative<bus::OkReply>(*endpoint.send(1, bus::LogRequest{bus::LogLevel::info, "x"})));
  stop.raise();  // what the Limiter does when it records a limit
  send_everything(endpoint);
  endpoint.cancel_all();
  RunResult result;
  endpoint.report(result);
  EXPECT_EQ(result.usage.host_calls, 10u);  // refused requests are still requests received
  ASSERT_EQ(result.logs.size(), 1u);        // only the line from before the limit
  EXPECT_EQ(result.logs[0].message, "x");
  expect_unchanged(data.path());
}

TEST(HostEndpoint, APassedDeadlineStopsRequestsEvenBeforeAnyoneNoticedIt) {
  testing::TempDir data;
  prepare(data.path());
  // Nobody raised the token: the engine is inside a native call and the watchdog has not woken yet.
  const bus::StopToken stop(bus::StopToken::Clock::now() - std::chrono::milliseconds(1));
  NoCompletions sink;
  HostEndpoint endpoint(stop_context(data.path()), sink, stop);
  send_everything(endpoint);
  expect_unchanged(data.path());
}

// ---- bundle events (docs/openhuman.md "Events") -----------------------------------------------------

TEST(HostEndpoint, RequestsOfTheBundleApiAreRefusedForAPlainSkill) {
  // A hostile worker of a plain skill could send them; the host serves only what the format has.
  NoCompletions sink;
  const auto tmp = std::filesystem::temp_directory_path() / "skillbox-endpoint-format";
  std::filesystem::remove_all(tmp);
  InvocationContext context;
  context.skill_id = "plain";
  context.state = state::make_local_backends(state::DataLayout(tmp), {});
  HostEndpoint endpoint(std::move(context), sink);
  const auto code_of = [](const std::optional<bus::Reply>& reply) {
    const auto* e = reply ? std::get_if<bus::ErrorReply>(&*reply) : nullptr;
    return e == nullptr ? std::string("ok") : std::string(bus::error_name(e->code));
  };
  EXPECT_EQ(code_of(endpoint.send(1, bus::EventRequest{"notify", "{}"})), "PermissionDenied");
  EXPECT_EQ(code_of(endpoint.send(2, bus::DbRequest{bus::DbOp::exec, "CREATE TABLE t (x)", "[]"})),
            "PermissionDenied");
  EXPECT_EQ(code_of(endpoint.send(3, bus::DbOpenRequest{})), "PermissionDenied");
  EXPECT_EQ(code_of(endpoint.send(4, bus::CredentialRequest{})), "PermissionDenied");
  endpoint.cancel_all();
  RunResult result;
  endpoint.report(result);
  EXPECT_TRUE(result.events.empty());
  EXPECT_FALSE(std::filesystem::exists(tmp)) << "nothing was created in the data directory";
}

TEST(HostEndpoint, AWorkersDbStatementIsRefusedAndItsDatabaseIsOpenedOnce) {
  // In worker mode the statements run in the worker; a DbRequest frame is never legitimate.
  NoCompletions sink;
  const auto tmp = std::filesystem::temp_directory_path() / "skillbox-endpoint-db";
  std::filesystem::remove_all(tmp);
  InvocationContext context;
  context.skill_id = "bundle";
  context.state = state::make_local_backends(state::DataLayout(tmp), {});
  context.format = SkillFormat::openhuman;
  HostEndpoint endpoint(std::move(context), sink);
  endpoint.serve_db_in_worker();
  const auto code_of = [](const std::optional<bus::Reply>& reply) {
    const auto* e = reply ? std::get_if<bus::ErrorReply>(&*reply) : nullptr;
    return e == nullptr ? std::string("ok") : std::string(bus::error_name(e->code));
  };
  EXPECT_EQ(code_of(endpoint.send(1, bus::DbRequest{bus::DbOp::exec, "CREATE TABLE t (x)", "[]"})),
            "PermissionDenied");
  const std::optional<bus::Reply> opened = endpoint.send(2, bus::DbOpenRequest{});
  ASSERT_TRUE(opened && std::holds_alternative<bus::BytesReply>(*opened)) << code_of(opened);
  EXPECT_TRUE(std::get<bus::BytesReply>(*opened).data.empty()) << "no database yet";
  EXPECT_EQ(code_of(endpoint.send(3, bus::DbOpenRequest{})), "PermissionDenied") << "only once";
  // An image that is not a database is not stored, whatever the outcome says.
  const Result<void> stored =
      endpoint.finish_db(Outcome::ok, bus::Bytes{'n', 'o', 't', ' ', 'a', ' ', 'd', 'b'});
  ASSERT_FALSE(stored);
  EXPECT_NE(stored.error().message.find("not a database"), std::string::npos) << stored.error().message;
  EXPECT_FALSE(std::filesystem::exists(tmp / "skills" / "bundle" / "db.sqlite"));
  std::filesystem::remove_all(tmp);
}

// A worker is hostile: what it sends as an event is checked before it is recorded or streamed.
TEST(HostEndpoint, AnEventOfUnknownTypeOrWithoutAnObjectIsRefusedAndNeitherRecordedNorStreamed) {
  NoCompletions sink;
  InvocationContext context;
  context.skill_id = "events";
  context.format = SkillFormat::openhuman;  // events are part of the bundle API
  HostEndpoint endpoint(std::move(context), sink);
  std::vector<RunEvent> seen;
  Observer observer;
  observer.on_event = [&seen](const RunEvent& e, Timestamp) { seen.push_back(e); };
  LiveRun live(observer);
  endpoint.observe(live);

  const auto code_of = [](const std::optional<bus::Reply>& reply) {
    const auto* e = reply ? std::get_if<bus::ErrorReply>(&*reply) : nullptr;
    return e == nullptr ? std::string("ok") : std::string(bus::error_name(e->code));
  };
  EXPECT_EQ(code_of(endpoint.send(1, bus::EventRequest{"exfiltrate", "{}"})), "InvalidArgument");
  EXPECT_EQ(code_of(endpoint.send(2, bus::EventRequest{"notify", "[1,2]"})), "InvalidArgument");
  EXPECT_EQ(code_of(endpoint.send(3, bus::EventRequest{"notify", "{\"title\": \"\xff\"}"})),
            "InvalidArgument")
      << "invalid UTF-8 is not JSON";
  EXPECT_EQ(code_of(endpoint.send(4, bus::EventRequest{"notify", "{\"title\":\"t\"}"})), "ok");
  endpoint.cancel_all();
  RunResult result;
  endpoint.report(result);
  ASSERT_EQ(result.events.size(), 1u);
  EXPECT_EQ(result.events[0].type, "notify");
  std::vector<std::string> streamed;
  for (const RunEvent& e : seen)
    if (e.kind == RunEvent::Kind::skill_event) streamed.push_back(e.detail + " " + e.data_json);
  EXPECT_EQ(streamed, std::vector<std::string>{"notify {\"title\":\"t\"}"});
}

}  // namespace
}  // namespace skillbox::runner
