// mcp/call_result.cpp — a RunResult as an MCP CallToolResult (see call_result.h).
#include "mcp/call_result.h"

#include <string>

#include "base/json_text.h"

namespace skillbox::mcp {
namespace {

nlohmann::json text_result(std::string text, bool is_error) {
  return {{"content", nlohmann::json::array({{{"type", "text"}, {"text", std::move(text)}}})},
          {"isError", is_error}};
}

/// A bundle's ToolResult {content: [...], is_error} as a CallToolResult, or null when `value` does not
/// have that shape.
nlohmann::json from_tool_result(const nlohmann::json& value) {
  if (!value.is_object()) return nullptr;
  const auto content = value.find("content");
  if (content == value.end() || !content->is_array()) return nullptr;
  for (const nlohmann::json& item : *content)
    if (!item.is_object() || !item.contains("type")) return nullptr;
  const nlohmann::json is_error = value.value("is_error", nlohmann::json(false));
  return {{"content", *content}, {"isError", is_error.is_boolean() && is_error.get<bool>()}};
}

}  // namespace

nlohmann::json call_tool_result(const Tool& tool, const RunResult& result) {
  if (result.outcome != Outcome::ok) {
    std::string text(to_string(result.outcome));
    if (result.error) {
      text += ": ";
      if (!result.error->name.empty()) text += result.error->name + ": ";
      text += result.error->message;
    }
    return text_result(std::move(text), true);
  }
  if (tool.bundle) {
    nlohmann::json mapped = from_tool_result(base::json_text::parse(result.value_json));
    if (!mapped.is_null()) return mapped;
  }
  // The value as compact JSON text; reformat keeps values of any depth and lone surrogates as written.
  std::string text = base::json_text::reformat(result.value_json);
  if (text.empty()) text = "null";
  if (!tool.output_validator) return text_result(std::move(text), false);
  // MCP "Structured Content" (2025-06-18): with an output schema the server must give structuredContent
  // that matches it, and should keep the same JSON as text for clients that read only content.
  nlohmann::json value = base::json_text::parse(result.value_json);
  if (!value.is_object())
    return text_result("output_schema: the export returned " + std::string(value.type_name()) +
                           ", not the JSON object the tool's output schema describes",
                       true);
  if (const std::optional<base::SchemaMismatch> bad = tool.output_validator->validate(value))
    return text_result(
        "output_schema: the export's value does not match the tool's output schema: " + bad->text(), true);
  nlohmann::json out = text_result(std::move(text), false);
  out["structuredContent"] = std::move(value);
  return out;
}

}  // namespace skillbox::mcp
