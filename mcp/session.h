// mcp/session.h — one MCP session, independent of its transport: it is fed the text of each message
// received and hands the text of each message to send to a sink.
//
// The stdio transport (mcp/stdio.h) feeds it lines; the Streamable HTTP transport of `skillbox serve`
// (server/mcp_endpoint.h) feeds it request bodies and routes each message to the POST of the request
// it belongs to (Outgoing). What it implements (MCP revisions 2025-06-18 and 2025-11-25):
//  - lifecycle: `initialize` (version negotiation: the client's revision when supported, else the
//    latest), `notifications/initialized`, `ping` at any time; other requests before `initialize`
//    are refused with Invalid Request;
//  - tools: `tools/list` (cursor pagination; a cursor this session did not give is Invalid params),
//    `tools/call` (one invocation on the runner per call, concurrently with reading further
//    messages); replace_tools() swaps the tools served and, when they differ, sends
//    `notifications/tools/list_changed` (capability `tools.listChanged`);
//  - logging: `logging/setLevel`; the skill's log lines as `notifications/message` (logger = the tool's
//    name) while the call runs;
//  - progress: with `params._meta.progressToken` on a call, each event the skill reports
//    (RunEvent::Kind::skill_event) as `notifications/progress`;
//  - cancellation: `notifications/cancelled` cancels the run of that request (CancelToken) and no
//    response is sent for it, as the spec asks.
// JSON-RPC errors are mcp/jsonrpc.h's. Nothing a message holds ever stops the session.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "mcp/jsonrpc.h"
#include "mcp/tools.h"
#include "skillbox/skillbox.h"

namespace skillbox::mcp {

/// The protocol revisions served, oldest first; the last is what a client asking for another gets.
inline constexpr std::string_view kProtocolVersions[] = {"2025-06-18", "2025-11-25"};

/// What a session serves and how.
/// What a session's owner does around each tools/call that runs (skillbox serve: its quotas and the
/// request's audit line), on the call's thread. Either may be empty.
struct CallHooks {
  /// Before the run: the tenant the run uses, given the session's (`tenant`, maybe null); it may return
  /// another (a copy whose audit sink is tapped, say). `request_id`: the tools/call request's id.
  std::function<std::shared_ptr<const TenantContext>(const nlohmann::json& request_id, const Tool& tool,
                                                     std::shared_ptr<const TenantContext> tenant)>
      starting;
  /// After the call ended (its run, or its refusal before a start: a deadline spent waiting, a
  /// cancellation), before its response goes out.
  std::function<void(const nlohmann::json& request_id, const Tool& tool, const RunResult& result)> ended;
};

struct SessionOptions {
  std::vector<Tool> tools;
  /// Runs the calls. Not owned; must outlive the session. Runner::run is thread-safe.
  Runner* runner = nullptr;
  /// Limits of every call (the command line's limit flags); they only lower the skill's own.
  LimitOverrides overrides{};
  /// Whose invocations the calls are. Null: the runner's default tenant.
  std::shared_ptr<const TenantContext> tenant{};
  /// Tools per tools/list page.
  size_t page_size = 100;
  /// Advertise `tools.listChanged` in initialize: whoever owns the session calls replace_tools() when
  /// the skills change (the stdio command watches their folders).
  bool list_changed = false;
  /// Calls that run at once; more wait in line (at most max_waiting_calls, then Server busy).
  size_t max_running_calls = 4;
  size_t max_waiting_calls = 256;
  CallHooks hooks{};
};

/// Where a session's messages go: called with one message text (no newline) at a time, in order, never
/// two at once. Must not block long (a call's log lines reach it from the runner's thread): queue it.
using MessageSink = std::function<void(std::string text)>;

/// One message the session sends, with the request it belongs to: what a transport that answers each
/// request on its own channel (Streamable HTTP: the response to that request's POST) routes by.
struct Outgoing {
  /// The message's text (no newline). Empty only when `response` is true and the request ends without
  /// an answer (the client cancelled it: MCP "Cancellation" forbids a response).
  std::string text;
  /// The id of the request the message answers or reports on (a call's log lines and progress carry
  /// their call's id); null for a message about no request (an error to a message without a valid id).
  nlohmann::json request_id;
  /// True for the request's last message: its response (or its end without one, text empty).
  bool response = false;
};
/// Same rules as MessageSink.
using RoutedSink = std::function<void(Outgoing message)>;
/// Where the session's own notes go (a client's response we did not ask for, a cancelled call): one
/// line of text without a newline, for the operator. Same rules as MessageSink.
using NoteSink = std::function<void(std::string text)>;

class Session {
 public:
  /// Every message text goes to `send`, in order (a call cancelled by the client sends nothing).
  Session(SessionOptions options, MessageSink send, NoteSink note);
  /// Every message goes to `send` with the request it belongs to (see Outgoing).
  Session(SessionOptions options, RoutedSink send, NoteSink note);
  /// close(Close::cancel).
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  using Clock = std::chrono::steady_clock;
  /// Handles the text of one message. Requests other than tools/call are answered before it returns;
  /// a tools/call is answered later, from a thread of the session. Any thread, one at a time.
  /// `arrived` is when the message reached the server: a call's timeout counts from then, so the
  /// time it waited (for a run thread over HTTP, behind the session's running calls) is part of it,
  /// as for a /v1 run; a call whose timeout passed before it could start ends `timeout` unstarted.
  void receive(std::string_view text, Clock::time_point arrived = Clock::now());

  /// Answers a message that the transport could not deliver (too long, for one) with `code` and
  /// `message`, id null.
  void refuse(ErrorCode code, std::string_view message);

  enum class Close : uint8_t {
    drain,   // let the calls in progress and those waiting finish and answer
    cancel,  // cancel them (their answers say `cancelled`)
  };
  /// Stops taking calls and returns once every call has ended. Idempotent.
  void close(Close how);

  /// Serves `tools` from now on: the next tools/list lists them and tools/call finds them by name; calls
  /// already running go on with the tool they started with. When the list differs from the one served
  /// (their tools/list JSON) and the session is initialized, sends notifications/tools/list_changed
  /// (MCP "Tools", List Changed Notification). Returns whether the list differed. Any thread.
  bool replace_tools(std::vector<Tool> tools);

  /// Sends `text` as notifications/message from `logger` at MCP level `level` ("warning", ...) when the
  /// client's logging/setLevel lets it through and the session is initialized. Any thread.
  void log(std::string_view level, std::string_view logger, std::string_view text);

 private:
  struct Call;
  /// The tools served at one time, shared with the calls that use one of them.
  struct ToolSet {
    std::vector<Tool> tools;
    std::map<std::string, const Tool*> by_name;
    nlohmann::json listed;  // every tool's tools/list JSON, in order
  };
  static std::shared_ptr<const ToolSet> tool_set(std::vector<Tool> tools);
  std::shared_ptr<const ToolSet> current_tools() const;

  void handle(Message message, Clock::time_point arrived);
  void handle_request(Message& message, Clock::time_point arrived);
  void handle_notification(const Message& message);
  nlohmann::json initialize(const nlohmann::json& params, std::string& error);
  nlohmann::json list_tools(const nlohmann::json& params, std::string& error) const;
  void start_call(Message& message, Clock::time_point arrived);
  void cancel_request(const nlohmann::json& params);
  void run_calls();
  void run_call(const std::shared_ptr<Call>& call);
  void send(std::string text, const nlohmann::json& request_id, bool response = true);

  const SessionOptions options_;
  const RoutedSink send_;
  const NoteSink note_;

  mutable base::Mutex tools_mu_;
  std::shared_ptr<const ToolSet> tools_ SKILLBOX_GUARDED_BY(tools_mu_);

  // Written only by the thread that calls receive(); read by replace_tools() and log() too.
  std::atomic<bool> initialized_{false};
  /// The MCP logging level from which skill log lines are sent: an index into kLogLevels (info until
  /// the client sets one with logging/setLevel).
  std::atomic<int> min_log_level_{1};

  base::Mutex send_mu_;  // one message at a time, in order

  base::Mutex mu_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Call>> waiting_ SKILLBOX_GUARDED_BY(mu_);
  /// Calls waiting or running, by their id's JSON text.
  std::map<std::string, std::shared_ptr<Call>> calls_ SKILLBOX_GUARDED_BY(mu_);
  bool closing_ SKILLBOX_GUARDED_BY(mu_) = false;
  std::vector<std::thread> workers_;
};

}  // namespace skillbox::mcp
