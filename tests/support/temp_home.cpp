// tests/support/temp_home.cpp — the test binary's own data directory (not linked into the benchmarks,
// which have no gtest).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace skillbox::testing {
namespace {

/// Gives the test process a data directory of its own ($SKILLBOX_HOME, removed at the end), so that
/// runners built without HostOptions::data_dir never write into the user's real data directory and
/// never meet the skill-id bindings (docs/manifest.md "Identity") of another test process.
class TempSkillboxHome : public ::testing::Environment {
 public:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "skillbox-home-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    home_ = tmpl;
    ::setenv("SKILLBOX_HOME", home_.c_str(), 1);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(home_, ec);
  }

 private:
  std::filesystem::path home_;
};

[[maybe_unused]] ::testing::Environment* const kTempHome =
    ::testing::AddGlobalTestEnvironment(new TempSkillboxHome);  // gtest owns it

}  // namespace
}  // namespace skillbox::testing
