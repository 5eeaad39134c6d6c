// Tests of resolve_data_dir: option, then $SKILLBOX_HOME, $XDG_DATA_HOME, ~/.local/share
// (docs/architecture.md "Contracts").
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include "skillbox/skillbox.h"
#include "support/scoped_env.h"

namespace skillbox {
namespace {

using testing::ScopedEnv;

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
