// server/skill_catalog.cpp — see skill_catalog.h.
#include "server/skill_catalog.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <system_error>

#include "base/json_text.h"
#include "base/skill_id.h"
#include "server/skill_digest.h"
#include "server/skill_uploads.h"

namespace skillbox::server {
namespace {

using ojson = nlohmann::ordered_json;

/// `text` with every occurrence of the host path `dir` replaced by `id`: load errors name the folder,
/// and a client must not learn where the operator keeps it.
std::string without_path(std::string text, const std::string& dir, std::string_view id) {
  for (size_t at = text.find(dir); !dir.empty() && at != std::string::npos;
       at = text.find(dir, at + id.size())) {
    text.replace(at, dir.size(), id);
  }
  return text;
}

ojson describe(const Skill& skill, std::string_view id) {
  const Manifest& m = skill.manifest();
  ojson out;
  out["id"] = std::string(id);
  out["name"] = m.name;
  out["version"] = m.version;
  out["description"] =
      m.bundle && !m.bundle->description.empty() ? ojson(m.bundle->description) : ojson(nullptr);
  out["format"] = m.format == SkillFormat::openhuman ? "openhuman" : "skillbox";
  return out;
}

ojson exports_of(const Skill& skill) {
  const CodeCheck check = check_code(skill);
  ojson list = ojson::array();
  for (const std::string& name : check.exports) list.push_back(name);
  return list;
}

ojson permissions_json(const Policy& p) {
  ojson fs{{"mode", std::string(to_string(p.fs.mode))},
           {"quota_bytes", p.fs.quota_bytes},
           {"max_files", p.fs.max_files},
           {"max_file_bytes", p.fs.max_file_bytes}};
  ojson http{{"allow", p.http.allow.texts()},
             {"methods", p.http.methods},
             {"max_request_bytes", p.http.max_request_bytes},
             {"max_response_bytes", p.http.max_response_bytes},
             {"timeout_ms", p.http.timeout_ms},
             {"max_redirects", p.http.max_redirects},
             {"allow_private_addresses", p.http.allow_private_addresses}};
  ojson store{{"quota_bytes", p.store.quota_bytes},
              {"max_keys", p.store.max_keys},
              {"max_value_bytes", p.store.max_value_bytes}};
  return ojson{{"fs", fs}, {"http", http}, {"env", p.env}, {"store", store}};
}

}  // namespace

Result<Skill, SkillProblem> find_skill(const std::filesystem::path& skills_dir, std::string_view id) {
  if (!base::is_valid_skill_id(id)) {
    return SkillProblem{400, "invalid_skill_id", "a skill id is " + std::string(base::kSkillIdRule)};
  }
  const std::filesystem::path dir = skills_dir / std::string(id);
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return SkillProblem{404, "skill_not_found", "no skill \"" + std::string(id) + "\""};
  }
  return load_skill_folder(dir, id);
}

Result<Skill, SkillProblem> load_skill_folder(const std::filesystem::path& dir, std::string_view id) {
  std::error_code ec;
  const bool bundle = std::filesystem::exists(dir / "manifest.json", ec);
  Result<Skill> skill = bundle ? load_skill(dir) : Skill::load(dir, {.id = std::string(id)});
  if (!skill) {
    return SkillProblem{422, "invalid_skill", without_path(skill.error().message, dir.string(), id)};
  }
  return std::move(*skill);
}

Result<FoundSkill, SkillProblem> find_tenant_skill(const SkillSources& sources, std::string_view id) {
  if (!base::is_valid_skill_id(id)) {
    return SkillProblem{400, "invalid_skill_id", "a skill id is " + std::string(base::kSkillIdRule)};
  }
  if (const std::optional<UploadedVersion> v = current_upload(sources.data_dir, id)) {
    Result<Skill, SkillProblem> skill = load_skill_folder(v->dir, id);
    if (!skill) return skill.error();
    return FoundSkill{.skill = std::move(*skill), .digest = v->digest, .uploaded = true};
  }
  Result<Skill, SkillProblem> skill = find_skill(sources.skills_dir, id);
  if (!skill) return skill.error();
  std::string digest = folder_digest(skill->dir()).value_or("");
  return FoundSkill{.skill = std::move(*skill), .digest = std::move(digest), .uploaded = false};
}

std::vector<std::string> skill_ids(const std::filesystem::path& skills_dir) {
  std::vector<std::string> ids;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(skills_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (base::is_valid_skill_id(name) && it->is_directory(ec)) ids.push_back(name);
    if (ids.size() >= kMaxListedSkills) break;
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::string skill_list_json(const std::filesystem::path& skills_dir) {
  ojson list = ojson::array();
  for (const std::string& id : skill_ids(skills_dir)) {
    Result<Skill, SkillProblem> skill = find_skill(skills_dir, id);
    if (!skill) {
      list.push_back(ojson{{"id", id}, {"error", skill.error().message}});
      continue;
    }
    ojson entry = describe(*skill, id);
    entry["exports"] = exports_of(*skill);
    list.push_back(std::move(entry));
  }
  return base::json_text::write(ojson{{"skills", std::move(list)}});
}

std::vector<std::string> tenant_skill_ids(const SkillSources& sources) {
  std::vector<std::string> ids = uploaded_ids(sources.data_dir, kMaxListedSkills);
  for (std::string& id : skill_ids(sources.skills_dir)) ids.push_back(std::move(id));
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  if (ids.size() > kMaxListedSkills) ids.resize(kMaxListedSkills);
  return ids;
}

std::string tenant_skill_list_json(const SkillSources& sources) {
  ojson list = ojson::array();
  for (const std::string& id : tenant_skill_ids(sources)) {
    Result<FoundSkill, SkillProblem> found = find_tenant_skill(sources, id);
    if (!found) {
      list.push_back(ojson{{"id", id}, {"error", found.error().message}});
      continue;
    }
    ojson entry = describe(found->skill, id);
    entry["exports"] = exports_of(found->skill);
    entry["digest"] = found->digest.empty() ? ojson(nullptr) : ojson(found->digest);
    entry["source"] = found->uploaded ? "upload" : "folder";
    list.push_back(std::move(entry));
  }
  return base::json_text::write(ojson{{"skills", std::move(list)}});
}

std::string skill_detail_json(const FoundSkill& found, std::string_view id, const LimitOverrides& ceilings) {
  const Skill& skill = found.skill;
  const Manifest& m = skill.manifest();
  ojson out = describe(skill, id);
  out["entry"] = m.entry;
  out["exports"] = exports_of(skill);
  const Limits l = ceilings.apply(m.limits);
  out["limits"] = ojson{{"memory_mb", l.memory_bytes >> 20},
                        {"timeout_ms", l.timeout_ms},
                        {"steps", l.steps},
                        {"stack_kb", l.stack_bytes >> 10}};
  out["permissions"] = permissions_json(m.permissions);
  out["digest"] = found.digest.empty() ? ojson(nullptr) : ojson(found.digest);
  out["source"] = found.uploaded ? "upload" : "folder";
  return base::json_text::write(out);
}

}  // namespace skillbox::server
