// base/skill_id.cpp — the skill-id rule.
#include "base/skill_id.h"

namespace skillbox::base {

bool is_valid_skill_id(std::string_view id) {
  if (id.empty() || id.size() > kMaxSkillIdBytes) return false;
  for (size_t i = 0; i < id.size(); ++i) {
    const char c = id[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-'))) return false;
  }
  return true;
}

}  // namespace skillbox::base
