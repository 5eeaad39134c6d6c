#include "skill_fixture.h"

#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace skillbox::testing {
namespace {

/// A fresh skill id: each TempSkill is a folder of its own, and a data directory binds an id to one
/// folder, so two TempSkills must not share an id unless a test means them to (and rebinds).
std::string fresh_id() {
  static std::atomic<unsigned> next{0};
  return "test-skill-" + std::to_string(::getpid()) + "-" + std::to_string(next++);
}

}  // namespace

TempSkill::TempSkill(std::initializer_list<std::pair<const std::string, std::string>> files,
                     std::string entry) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "skillbox-test-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  root_ = tmpl;
  dir_ = root_ / "skill";
  std::filesystem::create_directories(dir_);
  manifest_.id = fresh_id();
  manifest_.name = "Test skill";
  manifest_.version = "1.0.0";
  manifest_.entry = std::move(entry);
  for (const auto& [name, content] : files) write(name, content);
  write("skill.json", R"({"id":")" + manifest_.id + R"(","name":"Test skill","version":"1.0.0","entry":")" +
                          manifest_.entry + "\"}");
}

TempSkill::~TempSkill() {
  std::error_code ec;
  std::filesystem::remove_all(root_, ec);
}

void TempSkill::write(const std::string& name, const std::string& content) const {
  std::filesystem::path p = dir_ / name;
  std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << content;
}

void TempSkill::symlink(const std::string& name, const std::filesystem::path& target) const {
  std::filesystem::path p = dir_ / name;
  std::filesystem::create_directories(p.parent_path());
  std::filesystem::create_symlink(target, p);
}

bool process_isolation() {
  const char* mode = std::getenv("SKILLBOX_TEST_ISOLATION");
  return mode != nullptr && std::strcmp(mode, "process") == 0;
}

TestRunner::TestRunner(HostOptions options) {
  if (process_isolation()) {
#ifdef SKILLBOX_WORKER_PATH
    if (options.worker_path.empty()) options.worker_path = SKILLBOX_WORKER_PATH;
#endif
    runner_ = std::make_unique<WorkerRunner>(std::move(options));
  } else {
    runner_ = std::make_unique<InProcessRunner>(std::move(options));
  }
}

RunResult run(Runner& runner, const TempSkill& skill, const std::string& input_json,
              const std::string& export_name) {
  Invocation inv{
      .skill = skill.skill(), .export_name = export_name, .input_json = input_json, .overrides = {}};
  return runner.run(inv);
}

RunResult run_source(const std::string& source, const std::string& input_json) {
  TempSkill skill({{"index.js", source}});
  TestRunner runner;
  return run(runner, skill, input_json);
}

std::string describe(const RunResult& r) {
  std::string s(to_string(r.outcome));
  if (r.error) s += ": " + r.error->name + ": " + r.error->message + "\n" + r.error->stack;
  if (!r.value_json.empty()) s += " value=" + r.value_json;
  return s;
}

}  // namespace skillbox::testing
