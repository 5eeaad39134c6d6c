// fuzz/serve_request.cpp — the request path of `skillbox serve` fed raw bytes: Beast's parser and the
// HTTP layer's bounds and refusals (server/http_server.h parse_request), then the API's routing,
// authentication, skill lookup and run bodies (server/api.h), with a runner that runs nothing (every run
// "ok"). One tenant, one skill ("hello") in a temporary folder; the seeds carry its key.
//
// Invariants: never crashes; every answer has a status the API documents, and an error answer is one
// JSON object {"error": {"code", "message"}} with valid UTF-8; a request without the key never gets a
// tenant's data (only 401, or the routes that need no key); exactly one answer per request.
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <variant>

#include "base/json_text.h"
#include "base/utf8.h"
#include "fuzz/fuzz_check.h"
#include "server/api.h"
#include "server/api_key.h"
#include "server/http_server.h"

namespace {

namespace server = skillbox::server;

constexpr std::string_view kKey = "fuzz-key-0123456789abcdef";

class FixedRunner final : public skillbox::Runner {
 public:
  skillbox::RunResult run(const skillbox::Invocation& /*invocation*/) override {
    skillbox::RunResult r;
    r.outcome = skillbox::Outcome::ok;
    r.value_json = "1";
    return r;
  }
};

/// The server's parts, made once and never destroyed (the run thread lives to the process's end).
struct Fixture {
  std::filesystem::path dir;
  server::ServerConfig config;
  FixedRunner runner;
  std::unique_ptr<server::Metrics> metrics;
  std::unique_ptr<server::RunQueue> queue;
  std::atomic<bool> draining{false};
  std::unique_ptr<server::Api> api;
  server::Bounds bounds;

  Fixture() {
    std::string pattern = (std::filesystem::temp_directory_path() / "skillbox-fuzz-serve-XXXXXX").string();
    FUZZ_CHECK(::mkdtemp(pattern.data()) != nullptr);
    dir = pattern;
    std::filesystem::create_directories(dir / "skills" / "hello");
    std::ofstream(dir / "skills" / "hello" / "skill.json") << R"({"id": "hello", "entry": "index.js"})";
    std::ofstream(dir / "skills" / "hello" / "index.js") << "export default (input) => input;\n";
    server::TenantConfig t;
    t.id = "t";
    t.key_hashes.push_back(server::hash_api_key(kKey));
    t.skills_dir = dir / "skills";
    t.data_dir = dir / "data";
    config.tenants.push_back(t);
    config.max_body_bytes = 4096;
    config.max_header_bytes = 2048;
    config.max_target_bytes = 256;
    config.metrics_key_hashes.push_back(server::hash_api_key("fuzz-operator-key-0123456789"));
    metrics = std::make_unique<server::Metrics>(std::vector<std::string>{"t"});
    queue = std::make_unique<server::RunQueue>(
        1, 4, std::vector<server::LaneConfig>{{.weight = 1, .max_running = 1, .max_queued = 4}});
    api = std::make_unique<server::Api>(config, runner, *queue, *metrics, draining, skillbox::CancelToken());
    bounds = server::Bounds::of(config);
  }
};

Fixture& fixture() {
  static Fixture* f = new Fixture();  // never destroyed: its run thread outlives any static's order
  return *f;
}

void check_error_body(const server::HttpResponse& r) {
  FUZZ_CHECK(skillbox::base::utf8::is_valid(r.body));
  const nlohmann::json j = skillbox::base::json_text::parse(r.body);
  FUZZ_CHECK(j.is_object() && j.size() == 1 && j.contains("error"));
  FUZZ_CHECK(j["error"]["code"].is_string() && j["error"]["message"].is_string());
}

/// A streamed answer (an MCP call's event stream): its head and body, handed over when the body ends.
class Collected final : public server::ResponseStream {
 public:
  Collected(server::HttpResponse head, std::promise<server::HttpResponse>& done)
      : head_(std::move(head)), done_(done) {}
  void write(std::string bytes) override {
    const std::lock_guard<std::mutex> lock(mu_);
    head_.body += bytes;
  }
  void end() override {
    const std::lock_guard<std::mutex> lock(mu_);
    if (ended_) return;
    ended_ = true;
    done_.set_value(std::move(head_));
  }
  void end_with(std::string outcome, server::RequestFacts /*facts*/) override {
    {
      const std::lock_guard<std::mutex> lock(mu_);
      head_.outcome = std::move(outcome);
    }
    end();
  }
  [[nodiscard]] bool gone() const override { return false; }

 private:
  std::mutex mu_;
  server::HttpResponse head_;
  std::promise<server::HttpResponse>& done_;
  bool ended_ = false;
};

void check_answer(const server::HttpResponse& r, bool has_key) {
  static const std::set<unsigned> documented = {200, 202, 204, 400, 401, 403, 404, 405, 406,
                                                413, 414, 415, 422, 429, 431, 500, 503};
  FUZZ_CHECK(documented.count(r.status) == 1);
  FUZZ_CHECK(r.status != 500);  // a bug, by the API's own account
  const bool mcp = r.facts.route.ends_with(" /mcp");
  if (mcp) {
    // /mcp answers JSON-RPC (an error object of its own shape) or an event stream, or nothing (202, 204).
    if (!r.body.empty() && r.content_type.empty()) FUZZ_CHECK(skillbox::base::json_text::check(r.body).ok());
    if (!has_key) FUZZ_CHECK(r.status != 200 && r.status != 202 && r.status != 204);
    return;
  }
  if (r.status != 200) check_error_body(r);
  if (r.status == 200 && r.content_type.empty()) {
    FUZZ_CHECK(skillbox::base::json_text::check(r.body).ok());
  }
  // A streamed run (Accept: application/x-ndjson): one JSON object per line, the result last.
  if (r.status == 200 && r.content_type == "application/x-ndjson") {
    FUZZ_CHECK(!r.body.empty() && r.body.back() == '\n');
    for (size_t at = 0; at < r.body.size();) {
      const size_t end = r.body.find('\n', at);
      FUZZ_CHECK(skillbox::base::json_text::check(std::string_view(r.body).substr(at, end - at)).ok());
      at = end + 1;
    }
    FUZZ_CHECK(r.body.find("{\"type\":\"result\"") != std::string::npos);
  }
  // Without the tenant's key, a 200 comes only from the probes (or the operator's /metrics).
  if (!has_key && r.status == 200) FUZZ_CHECK(r.facts.route != "/v1/skills" && r.facts.skill.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Fixture& f = fixture();
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::optional<std::variant<server::HttpRequest, server::HttpResponse>> parsed =
      server::parse_request(bytes, f.bounds);
  if (!parsed) return 0;
  if (auto* refusal = std::get_if<server::HttpResponse>(&*parsed)) {
    FUZZ_CHECK(refusal->status == 400 || refusal->status == 413 || refusal->status == 414 ||
               refusal->status == 431);
    check_error_body(*refusal);
    return 0;
  }
  server::HttpRequest request = std::get<server::HttpRequest>(std::move(*parsed));
  request.request_id = "0123456789abcdef0123456789abcdef";
  const bool has_key = request.authorization.find(kKey) != std::string::npos;
  std::promise<server::HttpResponse> answered;
  std::future<server::HttpResponse> answer = answered.get_future();
  std::atomic<int> answers{0};
  f.api->handle(
      std::move(request),
      [&](server::HttpResponse r) {
        FUZZ_CHECK(++answers == 1);
        answered.set_value(std::move(r));
      },
      [&](server::HttpResponse head) -> std::shared_ptr<server::ResponseStream> {
        FUZZ_CHECK(++answers == 1);
        return std::make_shared<Collected>(std::move(head), answered);
      });
  check_answer(answer.get(), has_key);
  return 0;
}
