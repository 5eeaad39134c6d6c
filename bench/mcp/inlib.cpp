// bench/mcp/inlib.cpp — the in-library baseline of the MCP benchmark (bench/mcp/run.sh): one skill run
// through the public API as an embedder calls it, Skill::load once, then Runner::run per call.
//
//   bench_mcp_inlib in-process|worker SKILL_DIR ITERATIONS INPUT_JSON
//
// Prints the wall-clock microseconds of each call, one per line; exit 1 when a call is not ok.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "skillbox/skillbox.h"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: bench_mcp_inlib in-process|worker SKILL_DIR ITERATIONS INPUT_JSON\n");
    return 2;
  }
  const std::string mode = argv[1];
  skillbox::Result<skillbox::Skill> skill = skillbox::load_skill(argv[2]);
  if (!skill) {
    std::fprintf(stderr, "%s\n", skill.error().message.c_str());
    return 1;
  }
  const int iterations = std::atoi(argv[3]);
  skillbox::HostOptions host;
  host.worker_path = SKILLBOX_WORKER_PATH;
  std::unique_ptr<skillbox::Runner> runner;
  if (mode == "worker")
    runner = std::make_unique<skillbox::WorkerRunner>(host);
  else
    runner = std::make_unique<skillbox::InProcessRunner>(host);
  for (int i = 0; i < iterations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const skillbox::RunResult r = runner->run(
        skillbox::Invocation{.skill = *skill, .export_name = {}, .input_json = argv[4], .overrides = {}});
    const auto us =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start)
            .count();
    if (r.outcome != skillbox::Outcome::ok) {
      std::fprintf(stderr, "call %d: %s\n", i, r.error ? r.error->message.c_str() : "not ok");
      return 1;
    }
    std::printf("%lld\n", static_cast<long long>(us));
  }
  return 0;
}
