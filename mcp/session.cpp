// mcp/session.cpp — one MCP session (see session.h).
#include "mcp/session.h"

#include <algorithm>
#include <array>
#include <utility>

#include "base/json_text.h"
#include "base/quote.h"
#include "mcp/call_result.h"

namespace skillbox::mcp {
namespace {

/// MCP's logging levels (RFC 5424 severities), least severe first.
constexpr std::array<std::string_view, 8> kLogLevels = {"debug", "info",     "notice", "warning",
                                                        "error", "critical", "alert",  "emergency"};

int log_level_index(std::string_view name) {
  const auto it = std::find(kLogLevels.begin(), kLogLevels.end(), name);
  return it == kLogLevels.end() ? -1 : static_cast<int>(it - kLogLevels.begin());
}

/// The MCP level of a skill's log line.
int log_level_of(LogEntry::Level level) {
  switch (level) {
    case LogEntry::Level::debug:
      return 0;
    case LogEntry::Level::info:
      return 1;
    case LogEntry::Level::warn:
      return 3;
    case LogEntry::Level::error:
      return 4;
  }
  return 1;
}

/// Longest part of a client's string (a method, a tool name) an error message repeats.
constexpr size_t kMaxQuotedBytes = 128;

std::string shown(std::string_view text) {
  return base::quote(text, kMaxQuotedBytes);
}

constexpr std::string_view kMethods = "initialize, ping, tools/list, tools/call and logging/setLevel";

/// The key of a request id in the table of calls: its JSON text ("7" and "\"7\"" are different ids).
std::string id_key(const nlohmann::json& id) {
  return base::json_text::write(id);
}

/// A progress token is a string or an integer (MCP ProgressToken).
bool valid_progress_token(const nlohmann::json& token) {
  return token.is_string() || token.is_number_integer();
}

}  // namespace

/// One tools/call, from the moment it is received until it is answered (or cancelled).
struct Session::Call {
  nlohmann::json id;
  std::string key;
  std::shared_ptr<const ToolSet> tools;  // keeps `tool` alive when the tools are replaced meanwhile
  const Tool* tool = nullptr;
  std::string input_json;
  nlohmann::json progress_token;  // null when the call asked for no progress
  CancelToken cancel;
  bool cancelled_by_client = false;    // guarded by Session::mu_
  Session::Clock::time_point arrived;  // the call's timeout counts from here
};

namespace {

/// The run of a call whose timeout (`timeout_ms`) passed while it waited `waited_ms`: it never started.
RunResult expired_before_start(uint64_t timeout_ms, uint64_t waited_ms) {
  RunResult r;
  r.outcome = Outcome::timeout;
  r.error = ErrorInfo{.name = "Timeout",
                      .message = "the wall-clock deadline passed (limit is " + std::to_string(timeout_ms) +
                                 " ms) while the call waited " + std::to_string(waited_ms) +
                                 " ms to start; it did not run",
                      .stack = {},
                      .code = "ETIMEDOUT"};
  return r;
}

}  // namespace

Session::Session(SessionOptions options, MessageSink send, NoteSink note)
    : Session(
          std::move(options),
          [send = std::move(send)](Outgoing m) {
            if (!m.text.empty()) send(std::move(m.text));
          },
          std::move(note)) {}

Session::Session(SessionOptions options, RoutedSink send, NoteSink note)
    : options_(std::move(options)),
      send_(std::move(send)),
      note_(std::move(note)),
      tools_(tool_set(options_.tools)) {
  const size_t threads = std::max<size_t>(1, options_.max_running_calls);
  workers_.reserve(threads);
  for (size_t i = 0; i < threads; ++i) workers_.emplace_back([this] { run_calls(); });
}

Session::~Session() {
  close(Close::cancel);
}

std::shared_ptr<const Session::ToolSet> Session::tool_set(std::vector<Tool> tools) {
  auto set = std::make_shared<ToolSet>();
  set->tools = std::move(tools);
  set->listed = nlohmann::json::array();
  for (const Tool& t : set->tools) {
    set->by_name.emplace(t.name, &t);
    set->listed.push_back(t.to_json());
  }
  return set;
}

std::shared_ptr<const Session::ToolSet> Session::current_tools() const {
  base::MutexLock lock(tools_mu_);
  return tools_;
}

bool Session::replace_tools(std::vector<Tool> tools) {
  std::shared_ptr<const ToolSet> next = tool_set(std::move(tools));
  bool changed = false;
  {
    base::MutexLock lock(tools_mu_);
    changed = next->listed != tools_->listed;
    tools_ = std::move(next);
  }
  if (changed && initialized_.load())
    send(notification_text("notifications/tools/list_changed", nlohmann::json::object()), nullptr, false);
  return changed;
}

void Session::log(std::string_view level, std::string_view logger, std::string_view text) {
  const int index = log_level_index(level);
  if (index < 0 || index < min_log_level_.load() || !initialized_.load()) return;
  send(notification_text(
           "notifications/message",
           {{"level", std::string(level)}, {"logger", std::string(logger)}, {"data", std::string(text)}}),
       nullptr, false);
}

void Session::send(std::string text, const nlohmann::json& request_id, bool response) {
  base::MutexLock lock(send_mu_);
  send_(Outgoing{.text = std::move(text), .request_id = request_id, .response = response});
}

void Session::refuse(ErrorCode code, std::string_view message) {
  send(error_text(nullptr, code, message), nullptr);
}

void Session::receive(std::string_view text, Clock::time_point arrived) {
  Result<Message, RpcError> message = parse_message(text);
  if (!message) {
    send(error_text(message.error().id, message.error().code, message.error().message), message.error().id);
    return;
  }
  handle(std::move(*message), arrived);
}

void Session::handle(Message message, Clock::time_point arrived) {
  switch (message.kind) {
    case Message::Kind::request:
      handle_request(message, arrived);
      return;
    case Message::Kind::notification:
      handle_notification(message);
      return;
    case Message::Kind::response:
      // This server sends no requests, so no response is expected; JSON-RPC forbids answering one.
      note_("ignored a response to a request this server did not send (id " + id_key(message.id) + ")");
      return;
  }
}

void Session::handle_request(Message& m, Clock::time_point arrived) {
  const auto fail = [&](ErrorCode code, const std::string& text) {
    send(error_text(m.id, code, text), m.id);
  };
  if (m.method.starts_with("notifications/"))
    return fail(ErrorCode::invalid_request,
                "invalid request: " + shown(m.method) + " is a notification; send it without an \"id\"");
  if (!m.params.is_null() && !m.params.is_object())
    return fail(ErrorCode::invalid_params,
                "invalid params: " + shown(m.method) + " takes its \"params\" as an object");
  if (m.method == "ping") return send(response_text(m.id, nlohmann::json::object()), m.id);
  if (m.method == "initialize") {
    if (initialized_)
      return fail(ErrorCode::invalid_request, "invalid request: the session is already initialized");
    std::string error;
    nlohmann::json result = initialize(m.params, error);
    if (!error.empty()) return fail(ErrorCode::invalid_params, error);
    initialized_ = true;
    return send(response_text(m.id, result), m.id);
  }
  const bool known = m.method == "tools/list" || m.method == "tools/call" || m.method == "logging/setLevel";
  if (!known)
    return fail(ErrorCode::method_not_found,
                "method not found: " + shown(m.method) + "; this server offers " + std::string(kMethods));
  if (!initialized_)
    return fail(ErrorCode::invalid_request,
                "invalid request: the session is not initialized; send initialize first (MCP lifecycle)");
  if (m.method == "tools/list") {
    std::string error;
    nlohmann::json result = list_tools(m.params, error);
    if (!error.empty()) return fail(ErrorCode::invalid_params, error);
    return send(response_text(m.id, result), m.id);
  }
  if (m.method == "logging/setLevel") {
    const nlohmann::json* level =
        m.params.is_object() && m.params.contains("level") ? &m.params["level"] : nullptr;
    const int index =
        level != nullptr && level->is_string() ? log_level_index(level->get<std::string>()) : -1;
    if (index < 0)
      return fail(
          ErrorCode::invalid_params,
          "invalid params: \"level\" must be one of debug, info, notice, warning, error, critical, alert, "
          "emergency");
    min_log_level_.store(index);
    return send(response_text(m.id, nlohmann::json::object()), m.id);
  }
  start_call(m, arrived);
}

void Session::handle_notification(const Message& m) {
  if (m.method == "notifications/initialized") return;
  if (m.method == "notifications/cancelled") return cancel_request(m.params);
  // Any other notification (progress from the client, roots changed, one of a later revision) needs
  // nothing from this server; JSON-RPC forbids answering a notification.
}

nlohmann::json Session::initialize(const nlohmann::json& params, std::string& error) {
  const nlohmann::json* asked =
      params.is_object() && params.contains("protocolVersion") ? &params["protocolVersion"] : nullptr;
  if (asked == nullptr || !asked->is_string()) {
    error = "invalid params: initialize needs \"protocolVersion\", a string such as \"" +
            std::string(std::end(kProtocolVersions)[-1]) + "\"";
    return nullptr;
  }
  for (const char* key : {"capabilities", "clientInfo"}) {
    if (params.contains(key) && !params[key].is_object()) {
      error = "invalid params: initialize's \"" + std::string(key) + "\" must be an object";
      return nullptr;
    }
  }
  // Version negotiation (MCP "Lifecycle"): the client's revision when this server supports it, else
  // the latest it supports; the client then decides whether it can go on.
  std::string version(std::end(kProtocolVersions)[-1]);
  for (std::string_view v : kProtocolVersions)
    if (v == asked->get_ref<const std::string&>()) version = v;
  return {
      {"protocolVersion", version},
      {"capabilities",
       {{"tools", {{"listChanged", options_.list_changed}}}, {"logging", nlohmann::json::object()}}},
      {"serverInfo", {{"name", "skillbox"}, {"version", std::string(kVersion)}}},
      {"instructions",
       "Each tool runs a skill in a fresh sandbox (skillbox). A tool's annotations follow from the skill's "
       "granted permissions."}};
}

nlohmann::json Session::list_tools(const nlohmann::json& params, std::string& error) const {
  const std::shared_ptr<const ToolSet> set = current_tools();
  size_t start = 0;
  if (params.is_object() && params.contains("cursor")) {
    // The cursor is opaque to the client; this server spells it "o" + the offset of the next page.
    const nlohmann::json& cursor = params["cursor"];
    const std::string text = cursor.is_string() ? cursor.get<std::string>() : std::string();
    bool ok = text.size() >= 2 && text.size() <= 11 && text[0] == 'o' && text[1] != '0';
    for (size_t i = 1; ok && i < text.size(); ++i) ok = text[i] >= '0' && text[i] <= '9';
    if (ok) start = std::stoull(text.substr(1));
    if (!ok || start >= set->tools.size()) {
      error = "invalid params: \"cursor\" is not one this server gave; start again without a cursor";
      return nullptr;
    }
  }
  const size_t page = std::max<size_t>(1, options_.page_size);
  const size_t end = std::min(set->tools.size(), start + page);
  nlohmann::json tools = nlohmann::json::array();
  for (size_t i = start; i < end; ++i) tools.push_back(set->listed[i]);
  nlohmann::json result = {{"tools", std::move(tools)}};
  if (end < set->tools.size()) result["nextCursor"] = "o" + std::to_string(end);
  return result;
}

void Session::start_call(Message& m, Clock::time_point arrived) {
  const auto fail = [&](ErrorCode code, const std::string& text) {
    send(error_text(m.id, code, text), m.id);
  };
  const nlohmann::json& params = m.params;
  const nlohmann::json* name = params.is_object() && params.contains("name") ? &params["name"] : nullptr;
  if (name == nullptr || !name->is_string())
    return fail(ErrorCode::invalid_params,
                "invalid params: tools/call needs \"name\", the tool's name (tools/list)");
  std::shared_ptr<const ToolSet> set = current_tools();
  const auto tool = set->by_name.find(name->get<std::string>());
  if (tool == set->by_name.end())
    return fail(ErrorCode::invalid_params, "invalid params: unknown tool " +
                                               shown(name->get_ref<const std::string&>()) +
                                               "; tools/list lists the tools");
  auto call = std::make_shared<Call>();
  call->id = m.id;
  call->key = id_key(m.id);
  call->tool = tool->second;
  call->tools = std::move(set);
  call->arrived = arrived;
  const nlohmann::json no_arguments = nlohmann::json::object();
  const nlohmann::json* arguments = &no_arguments;
  if (params.contains("arguments") && !params["arguments"].is_null()) {
    if (!params["arguments"].is_object())
      return fail(ErrorCode::invalid_params, "invalid params: \"arguments\" must be an object");
    arguments = &params["arguments"];
  }
  // Before any sandbox starts: arguments that do not match the tool's input schema never reach the skill.
  if (call->tool->input_validator) {
    if (const std::optional<base::SchemaMismatch> bad = call->tool->input_validator->validate(*arguments))
      return fail(ErrorCode::invalid_params,
                  "invalid params: the arguments do not match the input schema of " +
                      shown(call->tool->name) + ": " + bad->text());
  }
  call->input_json = base::json_text::write(*arguments);
  if (params.contains("_meta")) {
    const nlohmann::json& meta = params["_meta"];
    if (!meta.is_object())
      return fail(ErrorCode::invalid_params, "invalid params: \"_meta\" must be an object");
    if (meta.contains("progressToken")) {
      if (!valid_progress_token(meta["progressToken"]))
        return fail(ErrorCode::invalid_params,
                    "invalid params: \"progressToken\" must be a string or an integer");
      call->progress_token = meta["progressToken"];
    }
  }
  {
    base::MutexLock lock(mu_);
    if (closing_) return fail(ErrorCode::server_busy, "the server is shutting down");
    if (calls_.contains(call->key))
      return fail(ErrorCode::invalid_request, "invalid request: id " + call->key +
                                                  " is already used by a call in progress; use a new id");
    if (waiting_.size() >= options_.max_waiting_calls)
      return fail(ErrorCode::server_busy,
                  "server busy: " + std::to_string(options_.max_waiting_calls) +
                      " calls already wait to run (the limit); retry when some have ended");
    calls_.emplace(call->key, call);
    waiting_.push_back(call);
  }
  wake_.notify_one();
}

void Session::cancel_request(const nlohmann::json& params) {
  if (!params.is_object() || !params.contains("requestId") || !valid_id(params["requestId"])) {
    note_("ignored notifications/cancelled without a valid \"requestId\"");
    return;
  }
  const std::string key = id_key(params["requestId"]);
  base::MutexLock lock(mu_);
  const auto it = calls_.find(key);
  // A request that already ended or was never made: nothing to do (MCP "Cancellation").
  if (it == calls_.end()) return;
  it->second->cancelled_by_client = true;
  it->second->cancel.cancel();
}

void Session::run_calls() {
  for (;;) {
    std::shared_ptr<Call> call;
    {
      base::MutexLock lock(mu_);
      lock.wait(wake_, [this] {
        mu_.assert_held();
        return closing_ || !waiting_.empty();
      });
      if (waiting_.empty()) return;  // closing, and nothing left to run
      call = waiting_.front();
      waiting_.pop_front();
    }
    run_call(call);
  }
}

void Session::run_call(const std::shared_ptr<Call>& call) {
  const Tool& tool = *call->tool;
  Invocation invocation{.skill = tool.skill,
                        .export_name = tool.export_name,
                        .input_json = call->input_json,
                        .overrides = options_.overrides,
                        .narrowing = {},
                        .observer = {},
                        .cancel = call->cancel,
                        .tenant = options_.tenant};
  // The observer's callbacks come from the runner's thread, one at a time, while run() executes.
  invocation.observer.on_log = [this, &tool, call](const LogEntry& entry, Timestamp) {
    const int level = log_level_of(entry.level);
    if (level < min_log_level_.load()) return;
    send(notification_text("notifications/message", {{"level", kLogLevels[static_cast<size_t>(level)]},
                                                     {"logger", tool.name},
                                                     {"data", entry.message}}),
         call->id, /*response=*/false);
  };
  if (!call->progress_token.is_null()) {
    auto progress = std::make_shared<uint64_t>(0);
    invocation.observer.on_event = [this, call, progress](const RunEvent& event, Timestamp) {
      if (event.kind != RunEvent::Kind::skill_event) return;
      // MCP "Progress": the value must increase with each notification; no total is known.
      send(notification_text("notifications/progress", {{"progressToken", call->progress_token},
                                                        {"progress", ++*progress},
                                                        {"message", event.detail + " " + event.data_json}}),
           call->id, /*response=*/false);
    };
  }
  // The deadline runs from the call's arrival: the run gets what the wait left of the timeout.
  const Limits effective =
      options_.overrides.apply(options_.tenant ? options_.tenant->ceilings.apply(tool.skill.manifest().limits)
                                               : tool.skill.manifest().limits);
  const auto waited_ms = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - call->arrived).count());
  if (waited_ms > 0 && waited_ms < effective.timeout_ms)
    invocation.overrides.timeout_ms = effective.timeout_ms - waited_ms;
  if (options_.hooks.starting) invocation.tenant = options_.hooks.starting(call->id, tool, invocation.tenant);
  RunResult result;
  if (waited_ms >= effective.timeout_ms) {
    result = expired_before_start(effective.timeout_ms, waited_ms);
  } else if (call->cancel.cancelled()) {
    result.outcome = Outcome::cancelled;
    result.error = ErrorInfo{
        .name = "Cancelled", .message = "the call was cancelled before it started", .stack = {}, .code = {}};
  } else {
    result = options_.runner->run(invocation);
  }
  if (options_.hooks.ended) options_.hooks.ended(call->id, tool, result);
  bool answer = true;
  {
    base::MutexLock lock(mu_);
    answer = !call->cancelled_by_client;
    calls_.erase(call->key);
  }
  if (!answer) {
    // MCP "Cancellation": the receiver of a cancelled request sends no response for it.
    note_("call " + call->key + " of " + tool.name + " was cancelled by the client (outcome " +
          std::string(to_string(result.outcome)) + ")");
    send("", call->id);  // no answer: the request ends without one
    return;
  }
  send(response_text(call->id, call_tool_result(tool, result)), call->id);
}

void Session::close(Close how) {
  {
    base::MutexLock lock(mu_);
    closing_ = true;
    if (how == Close::cancel)
      for (auto& [key, call] : calls_) call->cancel.cancel();
  }
  wake_.notify_all();
  for (std::thread& t : workers_)
    if (t.joinable()) t.join();
  workers_.clear();
}

}  // namespace skillbox::mcp
