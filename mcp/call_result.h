// mcp/call_result.h — a RunResult as an MCP CallToolResult ({content, isError}).
//
// Outcome ok: the content is the value: for a skillbox skill one text item holding the export's value as
// JSON text; for an OpenHuman bundle the ToolResult's own content, its is_error as isError. Every other
// outcome (a limit, an error, a crash) is a tool execution error, isError true, with one text item
// naming the outcome and the error ("timeout: Timeout: ..."), so that the model sees what happened.
// With an output schema (skill.json tools[].output_schema) the value must be an object matching it; it is
// then structuredContent too, its JSON text still the text item (MCP 2025-06-18 "Structured Content").
// A value that does not match is a tool execution error saying so.
// Protocol errors (unknown tool, bad arguments) are JSON-RPC errors and never get here.
#pragma once

#include <nlohmann/json.hpp>

#include "mcp/tools.h"
#include "skillbox/skillbox.h"

namespace skillbox::mcp {

/// The CallToolResult of one run of `tool`.
[[nodiscard]] nlohmann::json call_tool_result(const Tool& tool, const RunResult& result);

}  // namespace skillbox::mcp
