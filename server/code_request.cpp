// server/code_request.cpp — see code_request.h.
#include "server/code_request.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/escape.h"
#include "base/json_text.h"
#include "server/run_request.h"

namespace skillbox::server {
namespace {

using json = nlohmann::json;

SkillProblem invalid(std::string message) {
  return SkillProblem{400, "invalid_request", std::move(message)};
}

/// The body as a JSON object, or the problem (as parse_run_request words it).
Result<json, SkillProblem> body_object(std::string_view body, const char* example) {
  const base::json_text::Checked checked = base::json_text::check(body, kMaxBodyDepth);
  if (checked.kind == base::json_text::Kind::too_deep) {
    return invalid("the body is nested deeper than " + std::to_string(kMaxBodyDepth) + " levels");
  }
  if (!checked.ok()) return invalid("the body is not valid JSON: " + json_problem(body));
  if (checked.kind != base::json_text::Kind::object) {
    return invalid(std::string("the body must be a JSON object such as ") + example);
  }
  return base::json_text::parse(body, kMaxBodyDepth);
}

/// The media type of the request's Content-Type, lower case, without parameters ("" when absent).
std::string media_type(const HttpRequest& request) {
  const std::string* value = request.header("content-type");
  if (value == nullptr) return {};
  std::string type = value->substr(0, value->find(';'));
  std::transform(type.begin(), type.end(), type.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.pop_back();
  while (!type.empty() && (type.front() == ' ' || type.front() == '\t')) type.erase(0, 1);
  return type;
}

}  // namespace

Result<SkillFiles, SkillProblem> upload_files(const HttpRequest& request, const UploadBounds& bounds) {
  const std::string type = media_type(request);
  if (type == "application/x-tar") return files_from_tar(request.body, bounds);
  if (type != "application/json" && !type.empty()) {
    return SkillProblem{415, "unsupported_media_type",
                        "Content-Type \"" + base::escape_text(type.substr(0, 100)) +
                            "\" is not served here; send application/json ({\"files\": {...}}) or "
                            "application/x-tar"};
  }
  Result<json, SkillProblem> tree = body_object(request.body, "{\"files\": {\"skill.json\": \"...\"}}");
  if (!tree) return tree.error();
  for (const auto& [key, value] : tree->items()) {
    if (key != "files") return invalid(base::escape_text(key) + ": unknown field; an upload takes files");
  }
  if (!tree->contains("files")) return invalid("files: missing; send {\"files\": {\"PATH\": \"TEXT\", ...}}");
  return files_from_json(tree->at("files"), bounds);
}

Result<InlineSkill, SkillProblem> inline_skill(std::string_view body, const UploadBounds& bounds) {
  Result<json, SkillProblem> tree =
      body_object(body, "{\"manifest\": {...}, \"files\": {\"index.js\": \"...\"}, \"input\": 1}");
  if (!tree) return tree.error();
  json run = json::object();
  const json* manifest = nullptr;
  const json* files = nullptr;
  for (const auto& [key, value] : tree->items()) {
    if (key == "manifest") {
      if (!value.is_object()) return invalid("manifest: expected an object (the skill.json manifest)");
      manifest = &value;
    } else if (key == "files") {
      files = &value;
    } else if (key == "input" || key == "export" || key == "limits") {
      run[key] = value;
    } else {
      return invalid(base::escape_text(key) +
                     ": unknown field; an inline run takes manifest, files, input, export and limits");
    }
  }
  if (files == nullptr) return invalid("files: missing; send {\"files\": {\"index.js\": \"...\"}, ...}");
  Result<SkillFiles, SkillProblem> read = files_from_json(*files, bounds);
  if (!read) return read.error();
  InlineSkill out{.files = std::move(*read), .run_body = base::json_text::write(run)};
  if (manifest != nullptr) {
    if (out.files.contains("skill.json")) {
      return invalid(
          "files.skill.json: give the manifest either as manifest or as files[\"skill.json\"], not both");
    }
    out.files.emplace("skill.json", base::json_text::write(*manifest));
  }
  return out;
}

Result<std::string, SkillProblem> bundle_run_body(std::string_view body, const std::string& export_name,
                                                  std::string_view input_field) {
  json run = json::object();
  run["export"] = export_name;
  run["input"] = input_field == "arguments" ? json::object() : json(nullptr);
  if (!body.empty()) {
    Result<json, SkillProblem> tree = body_object(body, "{\"arguments\": {\"q\": 1}}");
    if (!tree) return tree.error();
    for (const auto& [key, value] : tree->items()) {
      if (key == input_field) {
        if (input_field == "arguments" && !value.is_object()) {
          return invalid("arguments: expected an object (the tool's arguments)");
        }
        run["input"] = value;
      } else if (key == "limits") {
        run["limits"] = value;
      } else {
        return invalid(base::escape_text(key) + ": unknown field; this takes " + std::string(input_field) +
                       " and limits");
      }
    }
  }
  return base::json_text::write(run);
}

bool is_bundle_member_name(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '-';
  });
}

}  // namespace skillbox::server
