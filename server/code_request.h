// server/code_request.h — the bodies of the routes that carry code or call a bundle, checked field by
// field like a run's (server/run_request.h), then handed on as a run body where they run something:
//
//   PUT  /v1/skills/{id}                   {"files": {PATH: TEXT}} (application/json), or a tar
//                                          (application/x-tar)
//   POST /v1/run                           {"manifest"?: {...}, "files": {PATH: TEXT}, "input"?, "export"?,
//                                          "limits"?}
//   POST /v1/skills/{id}/tools/{tool}/call {"arguments"?: {...}, "limits"?}
//   POST /v1/skills/{id}/hooks/{hook}      {"input"?: any, "limits"?}
#pragma once

#include <string>
#include <string_view>

#include "server/http_types.h"
#include "server/skill_catalog.h"
#include "server/skill_files.h"
#include "skillbox/result.h"

namespace skillbox::server {

/// The files of an upload. Problems: 415 `unsupported_media_type` (neither JSON nor a tar), 400
/// `invalid_request` (the JSON's shape), and those of skill_files.h.
[[nodiscard]] Result<SkillFiles, SkillProblem> upload_files(const HttpRequest& request,
                                                            const UploadBounds& bounds);

/// An inline skill: its files (the manifest written as skill.json) and the run body (export, input,
/// limits) for parse_run_request.
struct InlineSkill {
  SkillFiles files;
  std::string run_body;
};
[[nodiscard]] Result<InlineSkill, SkillProblem> inline_skill(std::string_view body,
                                                             const UploadBounds& bounds);

/// The run body of a bundle call: `export_name` ("tool:NAME", "hook:NAME") with the body's `input_field`
/// ("arguments" for a tool, default {}; "input" for a hook, default null) as input, and its limits.
[[nodiscard]] Result<std::string, SkillProblem> bundle_run_body(std::string_view body,
                                                                const std::string& export_name,
                                                                std::string_view input_field);

/// True when `name` may name a bundle's tool or hook in a URL: 1 to 128 of A-Z a-z 0-9 _ . -
/// (undecoded: '%' is not among them).
[[nodiscard]] bool is_bundle_member_name(std::string_view name);

}  // namespace skillbox::server
