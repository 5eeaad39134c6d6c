// fuzz/js_eval.cpp — JavaScript evaluation under tiny limits, in-process and in a worker process.
//
// The input is the source of the skill's entry module (index.js). The skill has 1 MiB of heap (the
// smallest memory_mb), 200,000 steps, a 64 KiB stack and a 1 s deadline, and no permissions. Every
// input runs through InProcessRunner, then through WorkerRunner (the skillbox-worker of the same
// build, with a pool of one).
// Invariants: the host never crashes (sanitizers watch it); every outcome is one a skill can cause
// (ok, error, invalid, or a limit): `internal` means a bug in skillbox, and `crashed` means the engine
// died in the worker (a memory-safety bug the wall contained, still a finding); a limit outcome carries
// an error, an ok outcome a JSON value.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "fuzz/fuzz_check.h"
#include "skillbox/skillbox.h"

namespace {

struct Fixture {
  std::filesystem::path root;
  std::unique_ptr<skillbox::InProcessRunner> runner;
  std::unique_ptr<skillbox::WorkerRunner> worker;
};

void check_outcome(const skillbox::RunResult& result) {
  using skillbox::Outcome;
  FUZZ_CHECK(result.outcome != Outcome::internal);
  FUZZ_CHECK(result.outcome != Outcome::crashed);
  if (result.outcome == Outcome::ok) {
    FUZZ_CHECK(!result.value_json.empty());
    FUZZ_CHECK(!result.error.has_value());
  } else {
    FUZZ_CHECK(result.error.has_value());
  }
}

Fixture* fixture = nullptr;

void write_file(const std::filesystem::path& path, const uint8_t* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  FUZZ_CHECK(out.good());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char pattern[] = "/tmp/skillbox-fuzz-js-XXXXXX";
  FUZZ_CHECK(mkdtemp(pattern) != nullptr);
  fixture = new Fixture{pattern, nullptr, nullptr};
  std::filesystem::create_directories(fixture->root / "skill");
  std::string manifest = R"({"id": "fuzz", "entry": "index.js",
    "limits": {"memory_mb": 1, "steps": 200000, "stack_kb": 64, "timeout_ms": 1000}})";
  write_file(fixture->root / "skill" / "skill.json", reinterpret_cast<const uint8_t*>(manifest.data()),
             manifest.size());
  skillbox::HostOptions options;
  options.data_dir = fixture->root / "data";
  options.env = std::map<std::string, std::string>{};
  fixture->runner = std::make_unique<skillbox::InProcessRunner>(options);
  options.worker_path = SKILLBOX_FUZZ_WORKER_PATH;
  options.worker_pool_size = 1;
  fixture->worker = std::make_unique<skillbox::WorkerRunner>(options);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  write_file(fixture->root / "skill" / "index.js", data, size);
  auto skill = skillbox::Skill::load(fixture->root / "skill");
  FUZZ_CHECK(skill.ok());
  check_outcome(fixture->runner->run(skillbox::Invocation{.skill = *skill}));
  check_outcome(fixture->worker->run(skillbox::Invocation{.skill = *skill}));
  return 0;
}
