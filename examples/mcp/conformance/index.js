// examples/mcp/conformance — the tools the MCP conformance suite (@modelcontextprotocol/conformance)
// calls in its server scenarios, as an OpenHuman bundle in plain JavaScript: a classic script that sets
// globalThis.__skill (docs/openhuman.md). Serve it with bare tool names, as the suite calls them:
//
//   skillbox mcp examples/mcp/conformance --tool-names bare
//
// Each tool does what its scenario asks, with what a skill has: its result is text, log lines become
// notifications/message, events (platform.notify) become notifications/progress when the call carries
// a progress token. The scenarios skillbox does not serve, and why, are in
// tests/mcp/conformance-expected-failures.yml.

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

var tools = [
  {
    name: "test_simple_text",
    description: "Returns a simple text response",
    input_schema: { type: "object", properties: {} },
    execute: function () {
      return "This is a simple text response for testing.";
    },
  },
  {
    name: "test_error_handling",
    description: "Always fails: the result has isError true",
    input_schema: { type: "object", properties: {} },
    execute: function () {
      throw new Error("This tool intentionally returns an error for testing");
    },
  },
  {
    name: "test_tool_with_logging",
    description: "Sends three info log messages about 50 ms apart",
    input_schema: { type: "object", properties: {} },
    execute: async function () {
      console.info("Tool execution started");
      await sleep(50);
      console.info("Tool processing data");
      await sleep(50);
      console.info("Tool execution completed");
      return "Tool with logging executed successfully";
    },
  },
  {
    name: "test_tool_with_progress",
    description: "Reports progress three times about 50 ms apart (each event is a progress notification)",
    input_schema: { type: "object", properties: {} },
    execute: async function () {
      platform.notify("progress", "0/100");
      await sleep(50);
      platform.notify("progress", "50/100");
      await sleep(50);
      platform.notify("progress", "100/100");
      return "Tool with progress executed successfully";
    },
  },
  {
    name: "json_schema_2020_12_tool",
    description: "Tool with JSON Schema 2020-12 features",
    input_schema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: {
        address: {
          type: "object",
          properties: { street: { type: "string" }, city: { type: "string" } },
        },
      },
      properties: {
        name: { type: "string" },
        address: { $ref: "#/$defs/address" },
      },
      additionalProperties: false,
    },
    execute: function (args) {
      return { received: args };
    },
  },
];

globalThis.__skill = { default: { tools: tools } };
