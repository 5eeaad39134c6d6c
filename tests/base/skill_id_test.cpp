// base/skill_id.h: the one rule for skill ids (manifest, store, workspace).
#include "base/skill_id.h"

#include <gtest/gtest.h>

#include <string>

namespace skillbox::base {
namespace {

using namespace std::string_literals;

TEST(SkillId, AcceptsTheManifestRule) {
  for (const std::string& id : {"a"s, "weather"s, "0day"s, "my-skill_2.0"s, std::string(64, 'x')}) {
    EXPECT_TRUE(is_valid_skill_id(id)) << id;
  }
}

TEST(SkillId, RefusesAnythingThatCouldNameAnotherFolder) {
  for (const std::string& id : {""s, "."s, ".."s, "a/b"s, "../x"s, "a\0b"s, "-x"s, "_x"s, ".x"s, "Weather"s,
                                "caf\xc3\xa9"s, "a b"s, std::string(65, 'x')}) {
    EXPECT_FALSE(is_valid_skill_id(id)) << id;
  }
}

}  // namespace
}  // namespace skillbox::base
