// tests/skill_fixture.h — temporary skill folders for tests, and a one-call way to run them.
#pragma once

#include <filesystem>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "skillbox/skillbox.h"

namespace skillbox::testing {

/// A skill folder under the system temp directory, removed on destruction. Writes `skill.json` from
/// the manifest too, so the same folder works with Skill::load once the manifest parser exists.
class TempSkill {
 public:
  /// `files` maps skill-relative names to contents; the entry is `index.js` unless changed.
  explicit TempSkill(std::initializer_list<std::pair<const std::string, std::string>> files,
                     std::string entry = "index.js");
  ~TempSkill();
  TempSkill(const TempSkill&) = delete;
  TempSkill& operator=(const TempSkill&) = delete;

  void write(const std::string& name, const std::string& content) const;
  void symlink(const std::string& name, const std::filesystem::path& target) const;

  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }
  /// The manifest the skill is run with; tests change limits/permissions through it.
  Manifest& manifest() { return manifest_; }
  [[nodiscard]] Skill skill() const { return Skill(dir_, manifest_); }

 private:
  std::filesystem::path
      root_;  // the temp folder; the skill is root_/skill (so tests can put files beside it)
  std::filesystem::path dir_;
  Manifest manifest_;
};

/// The isolation the suite runs in: SKILLBOX_TEST_ISOLATION=process selects process isolation
/// (WorkerRunner), anything else in-process. ctest registers the whole suite once per mode.
bool process_isolation();

/// Skips the current test in process mode, naming the difference that makes it in-process only.
#define SKIP_IN_PROCESS_MODE(why)                                        \
  do {                                                                   \
    if (::skillbox::testing::process_isolation()) GTEST_SKIP() << (why); \
  } while (0)

/// The runner of the suite's isolation mode, with `options` (in process mode the built
/// skillbox-worker unless options.worker_path says otherwise).
class TestRunner final : public Runner {
 public:
  explicit TestRunner(HostOptions options = {});
  RunResult run(const Invocation& invocation) override { return runner_->run(invocation); }

 private:
  std::unique_ptr<Runner> runner_;
};

/// Runs `export_name` of `skill` with `input_json` on `runner`.
RunResult run(Runner& runner, const TempSkill& skill, const std::string& input_json = "null",
              const std::string& export_name = "");

/// A skill whose index.js is `source` (an ES module if it uses export), run once on a fresh runner.
RunResult run_source(const std::string& source, const std::string& input_json = "null");

/// "outcome: name: message" for assertion messages.
std::string describe(const RunResult& r);

}  // namespace skillbox::testing
