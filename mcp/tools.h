// mcp/tools.h — skills as MCP tools: names, descriptions, input schemas and the annotations that follow
// from each skill's policy (never from what the skill says about itself).
//
// A skillbox skill (skill.json) without a "tools" section is one tool, named by its id, that runs its
// default export with the call's arguments as input. One with a "tools" section (docs/manifest.md) gives
// one tool per declared tool, named `<skill-id>__<tool>`, each running its export. An OpenHuman
// bundle (manifest.json) gives one tool per tool it defines, named `<skill-id>__<tool>`, listed by
// evaluating the bundle once with the export "tools" (docs/openhuman.md), as `skillbox tools` does.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/json_schema.h"
#include "skillbox/skillbox.h"

namespace skillbox::mcp {

/// MCP tool annotations (ToolAnnotations in the MCP schema), computed from the skill's permissions.
struct ToolAnnotations {
  /// No workspace write mode, and http limited to GET and HEAD (or no http at all).
  bool read_only = true;
  /// The workspace may be written (permissions.fs.mode write or readwrite).
  bool destructive = false;
  /// permissions.http.allow is not empty: the tool may reach the world outside.
  bool open_world = false;
  /// What the skill declares (skill.json tools[].annotations); the only hints a skill may claim.
  std::string title;
  std::optional<bool> idempotent;
};

/// The annotations `policy` implies (see ToolAnnotations). The skill's own store and database are its
/// state, not the environment: they do not make a tool read-write.
[[nodiscard]] ToolAnnotations annotations_of(const Policy& policy);

/// Separates a skill's id from a bundle tool's name in an MCP tool name.
inline constexpr std::string_view kToolNameSeparator = "__";

/// How a bundle's tools are named.
enum class ToolNaming : uint8_t {
  prefixed,  // `<skill-id>__<tool>`: unique across the skills served (the default)
  bare,      // the bundle's own tool names (`--tool-names bare`), as clients that expect fixed names call
             // them; two tools with one name across the skills are refused as always
};

/// One tool served.
struct Tool {
  std::string name;                                        // unique among the tools served
  std::string title;                                       // for display; may be empty
  std::string description;                                 // may be empty
  nlohmann::json input_schema = nlohmann::json::object();  // a JSON Schema whose "type" is "object"
  /// The arguments' schema, compiled once; absent when the schema could not be compiled (a bundle's:
  /// the tool is then served without argument validation, and a warning says so).
  std::optional<base::JsonSchema> input_validator;
  /// A declared output schema (null: none) and its compiled form. With one, a result's
  /// structuredContent is the export's value, which must match it (docs/mcp.md).
  nlohmann::json output_schema;
  std::optional<base::JsonSchema> output_validator;
  ToolAnnotations annotations;
  Skill skill;
  /// What Invocation::export_name is for a call: "" (the default export) or "tool:NAME" for a bundle.
  std::string export_name;
  bool bundle = false;

  /// The MCP Tool object (tools/list): name, title, description, inputSchema, outputSchema (when
  /// declared), annotations.
  [[nodiscard]] nlohmann::json to_json() const;
};

/// True when `name` follows the MCP tool name rule of revision 2025-11-25 (1 to 128 characters from
/// A-Z, a-z, 0-9, '_', '-' and '.'). The rule is a SHOULD; a name outside it is served with a warning.
[[nodiscard]] bool conventional_tool_name(std::string_view name);

/// The tools of `skills`, in order. A bundle is evaluated once on `runner`, as `tenant` (give a
/// throwaway data directory: the bundle's top-level code runs and may write its state); its tools are
/// named as `naming` says. Errors name the skill folder and what went wrong: a bundle whose tools cannot
/// be listed, two tools with one name, a declared tool whose export the skill's module does not have.
/// `warnings` gets one line per oddity that does not stop serving (a name outside the MCP rule, a schema
/// that had to be replaced, a bundle schema that is not valid draft 7, so its tool's arguments are not
/// validated).
[[nodiscard]] Result<std::vector<Tool>> tools_of(const std::vector<Skill>& skills, Runner& runner,
                                                 const std::shared_ptr<const TenantContext>& tenant,
                                                 std::vector<std::string>& warnings,
                                                 ToolNaming naming = ToolNaming::prefixed);

}  // namespace skillbox::mcp
