// mcp/jsonrpc.cpp — reading JSON-RPC 2.0 messages and writing responses (see jsonrpc.h for the rules).
#include "mcp/jsonrpc.h"

#include "base/json_text.h"

namespace skillbox::mcp {
namespace {

RpcError invalid(std::string message, nlohmann::json id = nullptr) {
  return RpcError{.code = ErrorCode::invalid_request, .message = std::move(message), .id = std::move(id)};
}

/// Messages are written on one line; json_text::write escapes every control character in strings, so
/// no newline can reach the framing.
std::string one_line(const nlohmann::json& value) {
  return base::json_text::write(value);
}

}  // namespace

bool valid_id(const nlohmann::json& id) {
  if (id.is_string()) return id.get_ref<const std::string&>().size() <= kMaxIdBytes;
  if (id.is_number_integer()) {
    if (id.is_number_unsigned()) return id.get<uint64_t>() <= static_cast<uint64_t>(kMaxIntegerId);
    const int64_t v = id.get<int64_t>();
    return v >= -kMaxIntegerId && v <= kMaxIntegerId;
  }
  return false;
}

Result<Message, RpcError> parse_message(std::string_view text) {
  const base::json_text::Checked checked = base::json_text::check(text, kMaxDepth);
  if (checked.kind == base::json_text::Kind::too_deep)
    return RpcError{.code = ErrorCode::parse_error,
                    .message = "parse error: the message nests deeper than " + std::to_string(kMaxDepth) +
                               " levels (the limit)",
                    .id = nullptr};
  if (!checked.ok())
    return RpcError{.code = ErrorCode::parse_error,
                    .message = "parse error: not one JSON text in UTF-8; send one JSON-RPC message per line",
                    .id = nullptr};
  if (checked.kind == base::json_text::Kind::array)
    return invalid(
        "batches are not supported: MCP removed JSON-RPC batching in revision 2025-06-18; send each message "
        "as its own line");
  if (checked.kind != base::json_text::Kind::object)
    return invalid("invalid request: a message must be a JSON object");
  nlohmann::json m = base::json_text::parse(text, kMaxDepth);
  if (m.is_discarded())  // check() passed: only a number beyond a double's range fails here
    return RpcError{.code = ErrorCode::parse_error,
                    .message = "parse error: a number in the message is beyond the range of a double",
                    .id = nullptr};

  Message out;
  const auto id = m.find("id");
  const bool has_id = id != m.end();
  if (has_id) {
    if (id->is_null())
      return invalid("invalid request: \"id\" must not be null in MCP; use a string or an integer");
    if (!valid_id(*id))
      return invalid("invalid request: \"id\" must be a string of at most " + std::to_string(kMaxIdBytes) +
                     " bytes or an integer from -(2^53-1) to 2^53-1");
    out.id = *id;
  }
  const nlohmann::json reply_id = has_id ? out.id : nlohmann::json(nullptr);
  const auto version = m.find("jsonrpc");
  if (version == m.end() || !version->is_string() || version->get_ref<const std::string&>() != "2.0")
    return invalid("invalid request: \"jsonrpc\" must be the string \"2.0\"", reply_id);

  const auto method = m.find("method");
  const bool has_result = m.contains("result") || m.contains("error");
  if (method == m.end()) {
    if (has_result && has_id) {
      out.kind = Message::Kind::response;
      return out;
    }
    return invalid("invalid request: \"method\" is missing", reply_id);
  }
  if (has_result)
    return invalid("invalid request: a message has a \"method\" or a \"result\", not both", reply_id);
  if (!method->is_string()) return invalid("invalid request: \"method\" must be a string", reply_id);
  out.method = method->get<std::string>();
  if (const auto params = m.find("params"); params != m.end()) {
    if (!params->is_object() && !params->is_array())
      return invalid("invalid request: \"params\" must be an object", reply_id);
    out.params = std::move(*params);
  }
  out.kind = has_id ? Message::Kind::request : Message::Kind::notification;
  return out;
}

std::string response_text(const nlohmann::json& id, const nlohmann::json& result) {
  return one_line(nlohmann::json{{"jsonrpc", "2.0"}, {"id", id}, {"result", result}});
}

std::string error_text(const nlohmann::json& id, ErrorCode code, std::string_view message) {
  return one_line(
      nlohmann::json{{"jsonrpc", "2.0"},
                     {"id", id},
                     {"error", {{"code", static_cast<int>(code)}, {"message", std::string(message)}}}});
}

std::string notification_text(std::string_view method, const nlohmann::json& params) {
  return one_line(nlohmann::json{{"jsonrpc", "2.0"}, {"method", std::string(method)}, {"params", params}});
}

}  // namespace skillbox::mcp
