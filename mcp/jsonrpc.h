// mcp/jsonrpc.h — JSON-RPC 2.0 messages as MCP uses them: one message text in, a typed message or the
// error to answer with out; the texts of responses and notifications.
//
// What is checked, and where the rule comes from:
//  - JSON-RPC 2.0 (jsonrpc.org/specification): "jsonrpc" is exactly "2.0"; "method" is a string;
//    "params", when present, is an object or an array; an id is a string or a number without a
//    fractional part. A message that breaks these is an Invalid Request (-32600), answered with its
//    id when that id is valid, else with id null; text that is not JSON is a Parse error (-32700).
//  - MCP (basic protocol, revisions 2025-06-18 and 2025-11-25): an id is never null; MCP removed
//    JSON-RPC batches in 2025-06-18, so an array is refused as a whole with one error.
//  - Ours: an integer id must be exact in a double (|id| <= 2^53 - 1: clients in JavaScript could not
//    echo a larger one back), a string id is at most kMaxIdBytes, and the text nests at most
//    kMaxDepth levels (base/json_text.h parses it without recursion).
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "skillbox/result.h"

namespace skillbox::mcp {

/// JSON-RPC 2.0 error codes (jsonrpc.org/specification "Error object").
enum class ErrorCode : int {
  parse_error = -32700,
  invalid_request = -32600,
  method_not_found = -32601,
  invalid_params = -32602,
  internal_error = -32603,
  /// Implementation-defined server error (-32000 to -32099): the server cannot take the request now
  /// (too many calls waiting).
  server_busy = -32000,
};

/// Longest string id accepted, in bytes: ids are correlation tokens, not payloads.
inline constexpr size_t kMaxIdBytes = 256;
/// Largest magnitude of an integer id: 2^53 - 1, the largest integer every JSON implementation (a
/// double) holds exactly.
inline constexpr int64_t kMaxIntegerId = (int64_t{1} << 53) - 1;
/// Nesting accepted in a message. Tool arguments nested deeper than this are refused as a parse error.
inline constexpr size_t kMaxDepth = 256;

/// One message received.
struct Message {
  enum class Kind : uint8_t {
    request,       // has an id and a method: answered exactly once (unless cancelled)
    notification,  // a method without an id: never answered
    response,      // a result or an error without a method: a reply to a request of ours
  };
  Kind kind = Kind::notification;
  /// request and response: the id (a string or an integer); null for a notification.
  nlohmann::json id;
  std::string method;
  /// The params as sent (an object or an array), or null when absent.
  nlohmann::json params;
};

/// What to answer a message that could not be read: the error, and the id to answer with (null when
/// the message had no valid id).
struct RpcError {
  ErrorCode code = ErrorCode::internal_error;
  std::string message;
  nlohmann::json id;
};

/// Reads one message text (without its line terminator). Never throws.
[[nodiscard]] Result<Message, RpcError> parse_message(std::string_view text);

/// True when `id` is a valid request id (see the rules above).
[[nodiscard]] bool valid_id(const nlohmann::json& id);

/// The text of a success response (one line: no newline anywhere in it).
[[nodiscard]] std::string response_text(const nlohmann::json& id, const nlohmann::json& result);
/// The text of an error response.
[[nodiscard]] std::string error_text(const nlohmann::json& id, ErrorCode code, std::string_view message);
/// The text of a notification.
[[nodiscard]] std::string notification_text(std::string_view method, const nlohmann::json& params);

}  // namespace skillbox::mcp
