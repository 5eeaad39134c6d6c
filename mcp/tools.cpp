// mcp/tools.cpp — skills as MCP tools (see tools.h).
#include "mcp/tools.h"

#include <algorithm>
#include <set>

#include "base/json_text.h"

namespace skillbox::mcp {
namespace {

/// The longest tool name the MCP rule (revision 2025-11-25, "Tool names") recommends.
constexpr size_t kMaxConventionalNameBytes = 128;

/// `schema` as an MCP inputSchema: an object schema. A bundle's schema may be missing (null), lack a
/// "type" (the arguments are always an object, so saying so narrows nothing) or be something else.
nlohmann::json input_schema_of(const nlohmann::json& schema, const std::string& tool,
                               std::vector<std::string>& warnings) {
  if (schema.is_null()) return {{"type", "object"}};
  if (!schema.is_object()) {
    warnings.push_back("tool " + tool +
                       ": its input schema is not a JSON object; served as {\"type\":\"object\"}");
    return {{"type", "object"}};
  }
  const auto type = schema.find("type");
  if (type == schema.end()) {
    nlohmann::json out = schema;
    out["type"] = "object";
    return out;
  }
  if (!type->is_string() || type->get_ref<const std::string&>() != "object") {
    warnings.push_back("tool " + tool +
                       ": its input schema's type is not \"object\" (MCP tool arguments are an object); "
                       "served as {\"type\":\"object\"}");
    return {{"type", "object"}};
  }
  return schema;
}

std::string text_field(const nlohmann::json& o, const char* key) {
  const auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// The tools of one bundle, listed by its "tools" export.
Result<std::vector<Tool>> bundle_tools(const Skill& skill, Runner& runner,
                                       const std::shared_ptr<const TenantContext>& tenant,
                                       std::vector<std::string>& warnings, ToolNaming naming) {
  const std::string& id = skill.manifest().id;
  const RunResult r = runner.run(Invocation{
      .skill = skill, .export_name = "tools", .input_json = "null", .overrides = {}, .tenant = tenant});
  if (r.outcome != Outcome::ok)
    return Error{"could not list the bundle's tools: " + std::string(to_string(r.outcome)) +
                 (r.error ? ": " + r.error->message : "")};
  const nlohmann::json list = base::json_text::parse(r.value_json);
  if (!list.is_array()) return Error{"could not list the bundle's tools: the list is not a JSON array"};
  std::vector<Tool> out;
  const ToolAnnotations annotations = annotations_of(skill.manifest().permissions);
  for (const nlohmann::json& t : list) {
    if (!t.is_object()) continue;
    const std::string tool = text_field(t, "name");
    if (tool.empty()) {
      warnings.push_back("a tool without a name is not served");
      continue;
    }
    const std::string name = naming == ToolNaming::bare ? tool : id + std::string(kToolNameSeparator) + tool;
    const auto schema = t.find("input_schema");
    out.push_back(
        Tool{.name = name,
             .title = {},
             .description = text_field(t, "description"),
             .input_schema = input_schema_of(schema == t.end() ? nlohmann::json() : *schema, name, warnings),
             .annotations = annotations,
             .skill = skill,
             .export_name = "tool:" + tool,
             .bundle = true});
  }
  return out;
}

Tool skill_tool(const Skill& skill) {
  const Manifest& m = skill.manifest();
  std::string description = "Runs the skillbox skill \"" + m.id + "\"";
  if (!m.name.empty() && m.name != m.id)
    description += " (" + m.name + (m.version.empty() ? "" : " " + m.version) + ")";
  description +=
      ": its default export, with the arguments as its input; the result is the export's value as JSON.";
  return Tool{.name = m.id,
              .title = m.name,
              .description = std::move(description),
              .input_schema = {{"type", "object"}},
              .annotations = annotations_of(m.permissions),
              .skill = skill,
              .export_name = {},
              .bundle = false};
}

}  // namespace

ToolAnnotations annotations_of(const Policy& policy) {
  ToolAnnotations a;
  const bool fs_write = policy.fs.mode == FsMode::write || policy.fs.mode == FsMode::readwrite;
  const bool http = !policy.http.allow.empty();
  const bool http_writes =
      http && std::any_of(policy.http.methods.begin(), policy.http.methods.end(),
                          [](const std::string& m) { return m != "GET" && m != "HEAD"; });
  a.read_only = !fs_write && !http_writes;
  a.destructive = fs_write;
  a.open_world = http;
  return a;
}

bool conventional_tool_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxConventionalNameBytes) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
}

nlohmann::json Tool::to_json() const {
  nlohmann::json t = nlohmann::json::object();
  t["name"] = name;
  if (!title.empty()) t["title"] = title;
  t["description"] = description;
  t["inputSchema"] = input_schema;
  t["annotations"] = {{"readOnlyHint", annotations.read_only},
                      {"destructiveHint", annotations.destructive},
                      {"openWorldHint", annotations.open_world}};
  return t;
}

Result<std::vector<Tool>> tools_of(const std::vector<Skill>& skills, Runner& runner,
                                   const std::shared_ptr<const TenantContext>& tenant,
                                   std::vector<std::string>& warnings, ToolNaming naming) {
  std::vector<Tool> out;
  std::set<std::string> names;
  for (const Skill& skill : skills) {
    std::vector<Tool> tools;
    if (skill.manifest().format == SkillFormat::openhuman) {
      Result<std::vector<Tool>> listed = bundle_tools(skill, runner, tenant, warnings, naming);
      if (!listed) return Error{skill.dir().string() + ": " + listed.error().message};
      tools = std::move(*listed);
    } else {
      tools.push_back(skill_tool(skill));
    }
    for (Tool& t : tools) {
      if (!names.insert(t.name).second)
        return Error{
            skill.dir().string() + ": two tools are named \"" + t.name +
            "\"; serve each skill id once (tool names are <skill-id> and <skill-id>__<tool>; with bare "
            "names, each tool name once)"};
      if (!conventional_tool_name(t.name))
        warnings.push_back(
            "tool \"" + t.name +
            "\": the name is outside MCP's rule (1 to 128 of A-Z a-z 0-9 _ - .); some clients may "
            "refuse it");
      out.push_back(std::move(t));
    }
  }
  return out;
}

}  // namespace skillbox::mcp
