// tests/compat/bundle_support.h — copies of the example OpenHuman bundles, with an operator's grants.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "skillbox/skillbox.h"

namespace skillbox::testing {

/// The bundle <name> as the build made it from examples/openhuman/<name>/src (tsc, then esbuild:
/// SKILLBOX_OPENHUMAN_BUNDLES_DIR) copied under a fresh temp folder (removed on destruction), with
/// `grants` written as the skill.json beside manifest.json unless empty. data() is a data directory
/// for the runner beside it.
class Bundle {
 public:
  Bundle(const std::string& name, const std::string& grants);
  ~Bundle();
  Bundle(const Bundle&) = delete;
  Bundle& operator=(const Bundle&) = delete;

  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }
  [[nodiscard]] const std::filesystem::path& data() const { return data_; }
  [[nodiscard]] const std::filesystem::path& root() const { return root_; }
  /// load_skill(dir()); a failure fails the test.
  [[nodiscard]] Skill skill() const;
  void write(const std::string& name, const std::string& content) const;

 private:
  std::filesystem::path root_, dir_, data_;
};

/// A skill.json granting http to `origins` (private addresses allowed: loopback test servers),
/// GET and POST, the workspace read/write, and `extra` merged into permissions.
std::string grants(const std::vector<std::string>& origins,
                   const nlohmann::json& extra = nlohmann::json::object(),
                   const nlohmann::json& limits = nlohmann::json::object());

/// HostOptions with `data_dir` and, when given, `env` as the environment env.get sees.
HostOptions host(const std::filesystem::path& data_dir,
                 std::optional<std::map<std::string, std::string>> env = std::nullopt);

/// Runs `export_name` with `input_json` on `runner`.
RunResult call(Runner& runner, const Skill& skill, const std::string& export_name,
               const std::string& input_json = "null");

/// The parsed value of an ok run (null otherwise, with a test failure describing the run).
nlohmann::json value_of(const RunResult& r);

/// "outcome: name: message" plus the logs, for assertion messages.
std::string describe_run(const RunResult& r);

/// Every byte of every regular file below `dir` (to search for secrets).
std::string all_file_bytes(const std::filesystem::path& dir);

}  // namespace skillbox::testing
