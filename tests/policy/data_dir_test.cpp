// Tests of resolve_data_dir: option, then $SKILLBOX_HOME, $XDG_DATA_HOME, ~/.local/share
// (docs/architecture.md "Contracts").
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include "skillbox/skillbox.h"

namespace skillbox {
namespace {

/// Sets environment variables for one test and restores them afterwards.
class ScopedEnv {
 public:
  void set(const std::string& name, const char* value) {
    if (!saved_.count(name)) {
      const char* old = std::getenv(name.c_str());
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
    }
    if (value) {
      ::setenv(name.c_str(), value, 1);
    } else {
      ::unsetenv(name.c_str());
    }
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

TEST(ResolveDataDir, TheOptionWins) {
  ScopedEnv env;
  env.set("SKILLBOX_HOME", "/tmp/sbhome");
  HostOptions options;
  options.data_dir = "/srv/skills/../data";
  EXPECT_EQ(resolve_data_dir(options), "/srv/data");
}

TEST(ResolveDataDir, ThenSkillboxHome) {
  ScopedEnv env;
  env.set("SKILLBOX_HOME", "/tmp/sbhome");
  env.set("XDG_DATA_HOME", "/tmp/xdg");
  EXPECT_EQ(resolve_data_dir({}), "/tmp/sbhome");
}

TEST(ResolveDataDir, ThenXdgDataHome) {
  ScopedEnv env;
  env.set("SKILLBOX_HOME", nullptr);
  env.set("XDG_DATA_HOME", "/tmp/xdg");
  EXPECT_EQ(resolve_data_dir({}), "/tmp/xdg/skillbox");
}

TEST(ResolveDataDir, ThenHomeAndARelativeXdgIsIgnored) {
  ScopedEnv env;
  env.set("SKILLBOX_HOME", "");
  env.set("XDG_DATA_HOME", "relative/xdg");  // invalid per the XDG spec
  env.set("HOME", "/home/ada");
  EXPECT_EQ(resolve_data_dir({}), "/home/ada/.local/share/skillbox");
}

TEST(ResolveDataDir, RelativeValuesBecomeAbsolute) {
  ScopedEnv env;
  env.set("SKILLBOX_HOME", "rel/dir");
  const std::filesystem::path p = resolve_data_dir({});
  EXPECT_TRUE(p.is_absolute());
  EXPECT_EQ(p, std::filesystem::current_path() / "rel/dir");
}

}  // namespace
}  // namespace skillbox
