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

/// The compiled form of a bundle tool's input schema, or nothing (and a warning) when it is not a valid
/// draft 7 schema: existing bundles keep working, their arguments unchecked.
std::optional<base::JsonSchema> bundle_validator(const nlohmann::json& schema, const std::string& tool,
                                                 std::vector<std::string>& warnings) {
  Result<base::JsonSchema> compiled = base::JsonSchema::compile(schema);
  if (compiled) return std::move(*compiled);
  warnings.push_back("tool " + tool + ": its input schema is not a valid JSON Schema (draft 7): " +
                     compiled.error().message + "; served without argument validation");
  return std::nullopt;
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
    nlohmann::json input_schema =
        input_schema_of(schema == t.end() ? nlohmann::json() : *schema, name, warnings);
    std::optional<base::JsonSchema> validator = bundle_validator(input_schema, name, warnings);
    out.push_back(Tool{.name = name,
                       .title = {},
                       .description = text_field(t, "description"),
                       .input_schema = std::move(input_schema),
                       .input_validator = std::move(validator),
                       .output_schema = nullptr,
                       .output_validator = std::nullopt,
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
              .input_validator = std::nullopt,
              .output_schema = nullptr,
              .output_validator = std::nullopt,
              .annotations = annotations_of(m.permissions),
              .skill = skill,
              .export_name = {},
              .bundle = false};
}

/// A schema the manifest parser already checked (policy/manifest.cpp), compiled for the calls.
Result<base::JsonSchema> compile_declared(const std::string& text, const std::string& what) {
  Result<base::JsonSchema> compiled = base::JsonSchema::compile(base::json_text::parse(text));
  if (!compiled) return Error{what + ": " + compiled.error().message};
  return compiled;
}

/// The tools a skill declares in skill.json. Each export must exist: the entry module's exports are
/// known without running it (check_code); a classic script's are known only when it runs, and a call of
/// a missing one ends as an error then.
Result<std::vector<Tool>> declared_tools(const Skill& skill) {
  const Manifest& m = skill.manifest();
  const CodeCheck code = check_code(skill);
  if (!code.problems.empty())
    return Error{"the skill's code does not compile or load: " + code.problems.front().file + ": " +
                 code.problems.front().message + " (skillbox check shows every problem)"};
  std::vector<Tool> out;
  for (size_t i = 0; i < m.tools.size(); ++i) {
    const ToolDeclaration& d = m.tools[i];
    const std::string where = "skill.json: tools[" + std::to_string(i) + "]";
    if (code.entry_is_module &&
        std::find(code.exports.begin(), code.exports.end(), d.export_name) == code.exports.end())
      return Error{where + ".export: the entry module has no export \"" + d.export_name +
                   "\"; export it, or name one it has (skillbox check lists them)"};
    Result<base::JsonSchema> input = compile_declared(d.input_schema_json, where + ".input_schema");
    if (!input) return input.error();
    Tool t{.name = m.id + std::string(kToolNameSeparator) + d.name,
           .title = d.title,
           .description = d.description,
           .input_schema = base::json_text::parse(d.input_schema_json),
           .input_validator = std::move(*input),
           .output_schema = nullptr,
           .output_validator = std::nullopt,
           .annotations = annotations_of(m.permissions),
           .skill = skill,
           .export_name = d.export_name,
           .bundle = false};
    if (!d.output_schema_json.empty()) {
      Result<base::JsonSchema> output = compile_declared(d.output_schema_json, where + ".output_schema");
      if (!output) return output.error();
      t.output_schema = base::json_text::parse(d.output_schema_json);
      t.output_validator = std::move(*output);
    }
    t.annotations.title = d.annotation_title;
    t.annotations.idempotent = d.idempotent_hint;
    out.push_back(std::move(t));
  }
  return out;
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
  if (!output_schema.is_null()) t["outputSchema"] = output_schema;
  t["annotations"] = {{"readOnlyHint", annotations.read_only},
                      {"destructiveHint", annotations.destructive},
                      {"openWorldHint", annotations.open_world}};
  if (!annotations.title.empty()) t["annotations"]["title"] = annotations.title;
  if (annotations.idempotent) t["annotations"]["idempotentHint"] = *annotations.idempotent;
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
    } else if (!skill.manifest().tools.empty()) {
      Result<std::vector<Tool>> declared = declared_tools(skill);
      if (!declared) return Error{skill.dir().string() + ": " + declared.error().message};
      tools = std::move(*declared);
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
