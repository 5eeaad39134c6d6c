// server/skill_catalog.h — a tenant's skills: the folders of its skills folder, found by id and
// described as JSON for `GET /v1/skills` and `GET /v1/skills/{id}`.
//
// The id in a URL is checked against the skill-id rule (base/skill_id.h) before it is joined to any
// path, so no id can name a folder outside the tenant's skills folder ("..", "a/b", "%2e%2e", NUL).
// The folder's name is the id: a skill runs under the id the tenant addressed it by.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "skillbox/skillbox.h"

namespace skillbox::server {

/// Why a skill cannot be served: an HTTP status, an error code and a message for the client (which
/// never holds a host path).
struct SkillProblem {
  unsigned status = 404;
  std::string code;
  std::string message;
};

/// Loads the skill in the folder `dir` (manifest.json: an OpenHuman bundle; else skill.json, whose id
/// is then `id`). Problems: 422 `invalid_skill`, the message naming `id` where the loader named `dir`.
[[nodiscard]] Result<Skill, SkillProblem> load_skill_folder(const std::filesystem::path& dir,
                                                            std::string_view id);

/// The skill `id` of the tenant whose skills folder is `skills_dir`: 400 for an id the rule refuses,
/// 404 when there is no such folder, 422 when the folder holds no valid skill (the message says why).
[[nodiscard]] Result<Skill, SkillProblem> find_skill(const std::filesystem::path& skills_dir,
                                                     std::string_view id);

/// Most skills a listing loads: a listing compiles each skill, so it is bounded like any request.
inline constexpr size_t kMaxListedSkills = 1000;

/// The ids of the folders in `skills_dir` that follow the id rule, sorted.
[[nodiscard]] std::vector<std::string> skill_ids(const std::filesystem::path& skills_dir);

/// `{"skills":[{"id","name","version","description","format","exports"}...]}` for every skill of the
/// folder that loads (a folder that does not is listed with "error" instead of the rest).
[[nodiscard]] std::string skill_list_json(const std::filesystem::path& skills_dir);

/// Where a tenant's skills come from: the operator's skills folder, and the versions the tenant
/// uploaded into its data directory (server/skill_uploads.h). An uploaded id shadows a folder of the
/// same name (docs/server.md "Uploading a skill").
struct SkillSources {
  std::filesystem::path skills_dir;
  std::filesystem::path data_dir;
};

/// A skill found for a request: the skill, its digest (server/skill_digest.h; empty when the folder
/// could not be digested) and where it came from.
struct FoundSkill {
  Skill skill;
  std::string digest;
  bool uploaded = false;
};

/// The skill `id` of a tenant: its current uploaded version, else the folder of its skills folder
/// (find_skill's problems).
[[nodiscard]] Result<FoundSkill, SkillProblem> find_tenant_skill(const SkillSources& sources,
                                                                 std::string_view id);

/// The ids of a tenant's skills, from both sources (an id in both once), sorted; at most kMaxListedSkills.
[[nodiscard]] std::vector<std::string> tenant_skill_ids(const SkillSources& sources);

/// `{"skills":[...]}` as skill_list_json, over both sources, each entry with "digest" and "source"
/// ("upload" or "folder").
[[nodiscard]] std::string tenant_skill_list_json(const SkillSources& sources);

/// `{"id","name","version","description","format","entry","exports","limits","permissions","digest",
/// "source"}`: the limits are the manifest's under `ceilings` (what a run gets when it asks for nothing
/// lower) and the permissions those the manifest grants.
[[nodiscard]] std::string skill_detail_json(const FoundSkill& found, std::string_view id,
                                            const LimitOverrides& ceilings);

}  // namespace skillbox::server
