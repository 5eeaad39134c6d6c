// fuzz/mcp_session.cpp — the MCP session (mcp/session.h) fed arbitrary lines, as the stdio transport
// feeds them, with a runner that runs nothing (each call "ok", one log line).
//
// Invariants: never crashes; every message out is one line of valid UTF-8 holding one JSON-RPC 2.0
// object; a response has an id that is null, a string or an integer, and exactly one of result and
// error, an error with one of the codes the server uses; no more responses than lines came in.
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/json_text.h"
#include "base/utf8.h"
#include "fuzz/fuzz_check.h"
#include "mcp/session.h"

namespace {

using skillbox::mcp::Session;

class NullRunner final : public skillbox::Runner {
 public:
  skillbox::RunResult run(const skillbox::Invocation& invocation) override {
    if (invocation.observer.on_log) invocation.observer.on_log({skillbox::LogEntry::Level::info, "x"}, {});
    skillbox::RunResult r;
    r.outcome = skillbox::Outcome::ok;
    r.value_json = invocation.input_json;
    return r;
  }
};

const std::vector<skillbox::mcp::Tool>& tools() {
  static const std::vector<skillbox::mcp::Tool> list = [] {
    std::vector<skillbox::mcp::Tool> out;
    skillbox::Manifest m;
    m.id = "t";
    const skillbox::Skill skill("/nonexistent", m);
    for (const char* name : {"t", "b__x"})
      out.push_back(skillbox::mcp::Tool{.name = name,
                                        .title = {},
                                        .description = {},
                                        .input_schema = {{"type", "object"}},
                                        .annotations = {},
                                        .skill = skill,
                                        .export_name = {},
                                        .bundle = name[0] == 'b'});
    return out;
  }();
  return list;
}

void check_message(const std::string& text, size_t& responses) {
  FUZZ_CHECK(text.find('\n') == std::string::npos);
  FUZZ_CHECK(skillbox::base::utf8::is_valid(text));
  const nlohmann::json m = skillbox::base::json_text::parse(text);
  FUZZ_CHECK(m.is_object());
  FUZZ_CHECK(m.value("jsonrpc", "") == "2.0");
  if (m.contains("method")) return;  // a notification of ours
  ++responses;
  const nlohmann::json& id = m.at("id");
  FUZZ_CHECK(id.is_null() || id.is_string() || id.is_number_integer());
  FUZZ_CHECK(m.contains("result") != m.contains("error"));
  if (m.contains("error")) {
    const int code = m["error"].value("code", 0);
    FUZZ_CHECK(code == -32700 || code == -32600 || code == -32601 || code == -32602 || code == -32000);
    FUZZ_CHECK(!m["error"].value("message", "").empty());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  NullRunner runner;
  std::mutex mu;
  std::vector<std::string> out;
  size_t lines = 0;
  {
    Session session(
        skillbox::mcp::SessionOptions{.tools = tools(),
                                      .runner = &runner,
                                      .overrides = {},
                                      .tenant = {},
                                      .page_size = 1,
                                      .max_running_calls = 1,
                                      .max_waiting_calls = 4},
        [&](std::string text) {
          std::lock_guard<std::mutex> lock(mu);
          out.push_back(std::move(text));
        },
        [](std::string) {});
    std::string_view rest(reinterpret_cast<const char*>(data), size);
    while (!rest.empty()) {
      const size_t nl = rest.find('\n');
      const std::string_view line = rest.substr(0, nl);
      if (!line.empty()) {
        ++lines;
        session.receive(line);
      }
      if (nl == std::string_view::npos) break;
      rest.remove_prefix(nl + 1);
    }
    session.close(Session::Close::drain);
  }
  size_t responses = 0;
  for (const std::string& text : out) check_message(text, responses);
  FUZZ_CHECK(responses <= lines);
  return 0;
}
