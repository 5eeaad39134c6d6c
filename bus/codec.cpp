// bus/codec.cpp — MessagePack frames for bus requests and replies (layout in codec.h).
//
// One field list per message struct (fields() below) drives both directions, so the encoder and the
// decoder cannot disagree about order or count. Decoding parses the frame into a json tree through a
// SAX handler that bounds nesting depth, then converts that tree into the typed value, checking every
// field's type and range on the way.
#include "bus/codec.h"

#include <cmath>
#include <concepts>
#include <exception>
#include <limits>
#include <map>
#include <new>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "base/escape.h"
#include "bus/worker_frames.h"

namespace skillbox::bus {
namespace {

using json = nlohmann::json;

enum class FrameKind : uint64_t { request = 0, reply = 1, invocation = 2, progress = 3, result = 4 };
constexpr uint64_t kLastFrameKind = 4;
constexpr size_t kFrameFields = 5;  // [version, kind, id, tag, body]

// A new Request/Reply alternative needs a fields() list and a name below and a kFrameVersion bump;
// these asserts make forgetting the list impossible to miss.
static_assert(std::variant_size_v<Request> == 22, "update fields()/kName and bump kFrameVersion");
static_assert(std::variant_size_v<Reply> == 11, "update fields()/kName and bump kFrameVersion");

// ---- the last enumerator of each enum (decode refuses anything beyond) ---------------------------

constexpr uint64_t enum_max(std::type_identity<ErrorCode>) {
  return uint64_t(ErrorCode::IoError);
}
constexpr uint64_t enum_max(std::type_identity<LogLevel>) {
  return uint64_t(LogLevel::error);
}
constexpr uint64_t enum_max(std::type_identity<FsEncoding>) {
  return uint64_t(FsEncoding::binary);
}
constexpr uint64_t enum_max(std::type_identity<FsEntryType>) {
  return uint64_t(FsEntryType::other);
}
constexpr uint64_t enum_max(std::type_identity<HttpResponseType>) {
  return uint64_t(HttpResponseType::json);
}
constexpr uint64_t enum_max(std::type_identity<DbOp>) {
  return uint64_t(DbOp::all);
}
constexpr uint64_t enum_max(std::type_identity<CredentialKind>) {
  return uint64_t(CredentialKind::auth);
}
constexpr uint64_t enum_max(std::type_identity<SkillFormat>) {
  return uint64_t(SkillFormat::openhuman);
}
constexpr uint64_t enum_max(std::type_identity<Outcome>) {
  return uint64_t(Outcome::cancelled);
}

// ---- field lists, shared by encoder and decoder ---------------------------------------------------

template <class T, class U>
concept Is = std::same_as<std::remove_const_t<T>, U>;

void fields(auto& v, Is<LogRequest> auto& s) {
  v("level", s.level);
  v("text", s.text);
}
void fields(auto& v, Is<FsReadFileRequest> auto& s) {
  v("path", s.path);
  v("encoding", s.encoding);
}
void fields(auto& v, Is<FsWriteFileRequest> auto& s) {
  v("path", s.path);
  v("data", s.data);
  v("append", s.append);
}
void fields(auto& v, Is<FsReaddirRequest> auto& s) {
  v("path", s.path);
}
void fields(auto& v, Is<FsStatRequest> auto& s) {
  v("path", s.path);
}
void fields(auto& v, Is<FsExistsRequest> auto& s) {
  v("path", s.path);
}
void fields(auto& v, Is<FsMkdirRequest> auto& s) {
  v("path", s.path);
  v("recursive", s.recursive);
}
void fields(auto& v, Is<FsRemoveRequest> auto& s) {
  v("path", s.path);
  v("recursive", s.recursive);
}
void fields(auto& v, Is<FsRenameRequest> auto& s) {
  v("from", s.from);
  v("to", s.to);
}
void fields(auto& v, Is<HttpRequest> auto& s) {
  v("method", s.method);
  v("url", s.url);
  v("headers", s.headers);
  v("body", s.body);
  v("timeout_ms", s.timeout_ms);
  v("response_type", s.response_type);
}
void fields(auto& v, Is<StoreGetRequest> auto& s) {
  v("key", s.key);
}
void fields(auto& v, Is<StoreSetRequest> auto& s) {
  v("key", s.key);
  v("value_json", s.value_json);
}
void fields(auto& v, Is<StoreDeleteRequest> auto& s) {
  v("key", s.key);
}
void fields(auto& v, Is<StoreKeysRequest> auto& s) {
  v("prefix", s.prefix);
}
void fields(auto& v, Is<StoreIncrementRequest> auto& s) {
  v("key", s.key);
  v("delta", s.delta);
}
void fields(auto& v, Is<StoreCompareAndSetRequest> auto& s) {
  v("key", s.key);
  v("expected_json", s.expected_json);
  v("value_json", s.value_json);
}
void fields(auto& v, Is<EnvGetRequest> auto& s) {
  v("name", s.name);
}
void fields(auto& v, Is<EventRequest> auto& s) {
  v("type", s.type);
  v("data_json", s.data_json);
}
void fields(auto& v, Is<DbRequest> auto& s) {
  v("op", s.op);
  v("sql", s.sql);
  v("params_json", s.params_json);
}
void fields(auto& /*v*/, Is<DbOpenRequest> auto& /*s*/) {}
void fields(auto& v, Is<SourcesRequest> auto& s) {
  v("names", s.names);
}
void fields(auto& v, Is<CredentialRequest> auto& s) {
  v("kind", s.kind);
  v("revoke", s.revoke);
}

void fields(auto& v, Is<ErrorReply> auto& s) {
  v("code", s.code);
  v("message", s.message);
}
void fields(auto&, Is<OkReply> auto&) {}
void fields(auto& v, Is<BytesReply> auto& s) {
  v("data", s.data);
}
void fields(auto& v, Is<BoolReply> auto& s) {
  v("value", s.value);
}
void fields(auto& v, Is<FsDirEntry> auto& s) {
  v("name", s.name);
  v("type", s.type);
}
void fields(auto& v, Is<FsReaddirReply> auto& s) {
  v("entries", s.entries);
}
void fields(auto& v, Is<FsStatReply> auto& s) {
  v("type", s.type);
  v("size", s.size);
  v("mtime_ms", s.mtime_ms);
}
void fields(auto& v, Is<HttpResponseReply> auto& s) {
  v("status", s.status);
  v("status_text", s.status_text);
  v("headers", s.headers);
  v("body", s.body);
  v("url", s.url);
}
void fields(auto& v, Is<OptionalStringReply> auto& s) {
  v("value", s.value);
}
void fields(auto& v, Is<NumberReply> auto& s) {
  v("value", s.value);
}
void fields(auto& v, Is<StringListReply> auto& s) {
  v("values", s.values);
}
void fields(auto& v, Is<SourcesReply> auto& s) {
  v("files", s.files);
  v("refused", s.refused);
}

// Worker frames (bus/worker_frames.h).
void fields(auto& v, Is<SkillSources> auto& s) {
  v("entry", s.entry);
  v("files", s.files);
  v("refused", s.refused);
}
void fields(auto& v, Is<InvocationFrame> auto& s) {
  v("sources", s.sources);
  v("format", s.format);
  v("skill_id", s.skill_id);
  v("memory_bytes", s.memory_bytes);
  v("steps", s.steps);
  v("stack_bytes", s.stack_bytes);
  v("timeout_ms", s.timeout_ms);
  v("deadline_ns", s.deadline_ns);
  v("export_name", s.export_name);
  v("input_json", s.input_json);
  v("db_quota_bytes", s.db_quota_bytes);
  v("fetch", s.fetch);
}
void fields(auto& v, Is<ProgressFrame> auto& s) {
  v("steps", s.steps);
  v("heap_bytes", s.heap_bytes);
  v("heap_peak_bytes", s.heap_peak_bytes);
}
void fields(auto& v, Is<ErrorInfo> auto& s) {
  v("name", s.name);
  v("message", s.message);
  v("stack", s.stack);
  v("code", s.code);
}
void fields(auto& v, Is<ResultFrame> auto& s) {
  v("outcome", s.outcome);
  v("value_json", s.value_json);
  v("error", s.error);
  v("cpu_ms", s.cpu_ms);
  v("steps", s.steps);
  v("heap_peak_bytes", s.heap_peak_bytes);
  v("timers_dropped", s.timers_dropped);
  v("unhandled_rejections", s.unhandled_rejections);
  v("db_image", s.db_image);
}

// Names for error messages.
template <class T>
constexpr std::string_view kName = "?";
template <>
constexpr std::string_view kName<LogRequest> = "LogRequest";
template <>
constexpr std::string_view kName<FsReadFileRequest> = "FsReadFileRequest";
template <>
constexpr std::string_view kName<FsWriteFileRequest> = "FsWriteFileRequest";
template <>
constexpr std::string_view kName<FsReaddirRequest> = "FsReaddirRequest";
template <>
constexpr std::string_view kName<FsStatRequest> = "FsStatRequest";
template <>
constexpr std::string_view kName<FsExistsRequest> = "FsExistsRequest";
template <>
constexpr std::string_view kName<FsMkdirRequest> = "FsMkdirRequest";
template <>
constexpr std::string_view kName<FsRemoveRequest> = "FsRemoveRequest";
template <>
constexpr std::string_view kName<FsRenameRequest> = "FsRenameRequest";
template <>
constexpr std::string_view kName<HttpRequest> = "HttpRequest";
template <>
constexpr std::string_view kName<StoreGetRequest> = "StoreGetRequest";
template <>
constexpr std::string_view kName<StoreSetRequest> = "StoreSetRequest";
template <>
constexpr std::string_view kName<StoreDeleteRequest> = "StoreDeleteRequest";
template <>
constexpr std::string_view kName<StoreKeysRequest> = "StoreKeysRequest";
template <>
constexpr std::string_view kName<StoreIncrementRequest> = "StoreIncrementRequest";
template <>
constexpr std::string_view kName<StoreCompareAndSetRequest> = "StoreCompareAndSetRequest";
template <>
constexpr std::string_view kName<EnvGetRequest> = "EnvGetRequest";
template <>
constexpr std::string_view kName<EventRequest> = "EventRequest";
template <>
constexpr std::string_view kName<DbRequest> = "DbRequest";
template <>
constexpr std::string_view kName<CredentialRequest> = "CredentialRequest";
template <>
constexpr std::string_view kName<DbOpenRequest> = "DbOpenRequest";
template <>
constexpr std::string_view kName<SourcesRequest> = "SourcesRequest";
template <>
constexpr std::string_view kName<ErrorReply> = "ErrorReply";
template <>
constexpr std::string_view kName<OkReply> = "OkReply";
template <>
constexpr std::string_view kName<BytesReply> = "BytesReply";
template <>
constexpr std::string_view kName<BoolReply> = "BoolReply";
template <>
constexpr std::string_view kName<FsReaddirReply> = "FsReaddirReply";
template <>
constexpr std::string_view kName<FsStatReply> = "FsStatReply";
template <>
constexpr std::string_view kName<HttpResponseReply> = "HttpResponseReply";
template <>
constexpr std::string_view kName<OptionalStringReply> = "OptionalStringReply";
template <>
constexpr std::string_view kName<NumberReply> = "NumberReply";
template <>
constexpr std::string_view kName<StringListReply> = "StringListReply";
template <>
constexpr std::string_view kName<SourcesReply> = "SourcesReply";
template <>
constexpr std::string_view kName<InvocationFrame> = "InvocationFrame";
template <>
constexpr std::string_view kName<ProgressFrame> = "ProgressFrame";
template <>
constexpr std::string_view kName<ResultFrame> = "ResultFrame";

template <class T>
constexpr bool kIsOptional = false;
template <class T>
constexpr bool kIsOptional<std::optional<T>> = true;
template <class T>
constexpr bool kIsVector = false;
template <class T>
constexpr bool kIsVector<std::vector<T>> = true;
template <class T>
constexpr bool kIsPair = false;
template <class A, class B>
constexpr bool kIsPair<std::pair<A, B>> = true;
template <class T>
constexpr bool kIsMap = false;
template <class K, class V>
constexpr bool kIsMap<std::map<K, V>> = true;

// ---- encoding -------------------------------------------------------------------------------------

template <class T>
json encode_value(const T& v);

struct FieldEncoder {
  json out = json::array();
  template <class T>
  void operator()(const char* /*name*/, const T& field) {
    out.push_back(encode_value(field));
  }
};

template <class T>
json encode_value(const T& v) {
  if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, bool> || std::is_same_v<T, double>) {
    return json(v);
  } else if constexpr (std::is_same_v<T, Bytes>) {
    return json::binary(v);
  } else if constexpr (std::is_enum_v<T>) {
    return json(static_cast<uint64_t>(v));
  } else if constexpr (std::is_integral_v<T>) {
    static_assert(std::is_unsigned_v<T>, "messages carry only unsigned integers");
    return json(static_cast<uint64_t>(v));
  } else if constexpr (kIsOptional<T>) {
    return v ? encode_value(*v) : json(nullptr);
  } else if constexpr (kIsVector<T>) {
    json a = json::array();
    for (const auto& e : v) a.push_back(encode_value(e));
    return a;
  } else if constexpr (kIsPair<T>) {
    json a = json::array();
    a.push_back(encode_value(v.first));
    a.push_back(encode_value(v.second));
    return a;
  } else if constexpr (kIsMap<T>) {
    // An array of [key, value] pairs in key order (std::map's), so equal maps give equal bytes.
    json a = json::array();
    for (const auto& [key, value] : v) {
      json pair = json::array();
      pair.push_back(encode_value(key));
      pair.push_back(encode_value(value));
      a.push_back(std::move(pair));
    }
    return a;
  } else {
    FieldEncoder e;
    fields(e, v);
    return std::move(e.out);
  }
}

template <class Variant>
Bytes encode_frame(FrameKind kind, uint64_t id, const Variant& value) {
  json frame = json::array();
  frame.push_back(kFrameVersion);
  frame.push_back(static_cast<uint64_t>(kind));
  frame.push_back(id);
  frame.push_back(static_cast<uint64_t>(value.index()));
  frame.push_back(std::visit([](const auto& alt) { return encode_value(alt); }, value));
  return json::to_msgpack(frame);
}

// ---- parsing: MessagePack -> json tree with bounded depth ------------------------------------------

// Builds the json tree like nlohmann's own DOM parser, but refuses maps (never used in frames) and
// nesting deeper than kMaxFrameDepth before the recursive parser can descend further.
class BoundedTreeBuilder {
 public:
  explicit BoundedTreeBuilder(json& root) : root_(root) {}

  bool null() { return put(json(nullptr)); }
  bool boolean(bool v) { return put(json(v)); }
  bool number_integer(json::number_integer_t v) { return put(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return put(json(v)); }
  bool number_float(json::number_float_t v, const std::string& /*text*/) { return put(json(v)); }
  bool string(json::string_t& v) { return put(json(std::move(v))); }
  bool binary(json::binary_t& v) { return put(json(std::move(v))); }
  bool start_object(std::size_t /*len*/) { return refuse("a MessagePack map (frames use arrays only)"); }
  bool key(json::string_t& /*key*/) { return refuse("a MessagePack map"); }
  bool end_object() { return refuse("a MessagePack map"); }
  bool start_array(std::size_t /*len*/) {
    if (open_.size() >= kMaxFrameDepth) {
      return refuse("nesting deeper than " + std::to_string(kMaxFrameDepth) + " levels");
    }
    json* slot = place(json::array());
    open_.push_back(slot);
    return true;
  }
  bool end_array() {
    open_.pop_back();
    return true;
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*token*/,
                   const nlohmann::detail::exception& ex) {
    error_ = base::escape_text(ex.what());  // it quotes the frame's bytes: keep the message valid text
    return false;
  }

  [[nodiscard]] const std::string& error() const { return error_; }

 private:
  bool put(json v) {
    place(std::move(v));
    return true;
  }
  // Stores `v` as the root or as the next element of the innermost open array. Pointers held in
  // open_ stay valid: only the innermost array grows, and no open array is an element of it.
  json* place(json v) {
    if (open_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    json& parent = *open_.back();
    parent.push_back(std::move(v));
    return &parent.back();
  }
  bool refuse(std::string what) {
    error_ = "frame contains " + std::move(what);
    return false;
  }

  json& root_;
  std::vector<json*> open_;
  std::string error_;
};

// ---- decoding: json tree -> typed value -------------------------------------------------------------

// Where in the frame the decoder is, for error messages ("field headers[2][0]").
class DecodeContext {
 public:
  void push(std::string part) { path_.push_back(std::move(part)); }
  void pop() { path_.pop_back(); }
  bool fail(std::string_view what, const json& got) {
    if (!error_.empty()) return false;
    error_ = path_.empty() ? "body" : "field ";
    for (size_t i = 0; i < path_.size(); ++i) {
      if (i > 0 && path_[i][0] != '[') error_ += '.';
      error_ += path_[i];
    }
    error_ += ": expected ";
    error_ += what;
    error_ += ", got ";
    error_ += got.is_number_unsigned() || got.is_number_integer() ? "integer " + got.dump() : got.type_name();
    return false;
  }
  [[nodiscard]] const std::string& error() const { return error_; }

 private:
  std::vector<std::string> path_;
  std::string error_;
};

template <class T>
bool decode_value(json& j, T& out, DecodeContext& c);

struct FieldCounter {
  size_t count = 0;
  template <class T>
  void operator()(const char* /*name*/, const T& /*field*/) {
    ++count;
  }
};

struct FieldDecoder {
  json& array;
  DecodeContext& context;
  size_t next = 0;
  bool ok = true;
  template <class T>
  void operator()(const char* name, T& field) {
    if (!ok) return;
    context.push(name);
    ok = decode_value(array[next++], field, context);
    context.pop();
  }
};

template <class T>
bool decode_unsigned(json& j, T& out, uint64_t max, DecodeContext& c) {
  if (!j.is_number_unsigned() || j.get<uint64_t>() > max) {
    return c.fail((std::is_enum_v<T> ? "an enum value 0.." : "an unsigned integer 0..") + std::to_string(max),
                  j);
  }
  out = static_cast<T>(j.get<uint64_t>());
  return true;
}

template <class T>
bool decode_value(json& j, T& out, DecodeContext& c) {
  if constexpr (std::is_same_v<T, std::string>) {
    if (!j.is_string()) return c.fail("a string", j);
    out = std::move(j.get_ref<std::string&>());
    return true;
  } else if constexpr (std::is_same_v<T, Bytes>) {
    // ext types decode as binary with a subtype; frames never contain them.
    if (!j.is_binary() || j.get_binary().has_subtype()) return c.fail("bytes (bin)", j);
    out = std::move(static_cast<Bytes&>(j.get_binary()));
    return true;
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!j.is_boolean()) return c.fail("a bool", j);
    out = j.get<bool>();
    return true;
  } else if constexpr (std::is_enum_v<T>) {
    return decode_unsigned(j, out, enum_max(std::type_identity<T>{}), c);
  } else if constexpr (std::is_integral_v<T>) {
    return decode_unsigned(j, out, std::numeric_limits<T>::max(), c);
  } else if constexpr (std::is_same_v<T, double>) {
    if (!j.is_number_float() || !std::isfinite(j.get<double>())) return c.fail("a finite float", j);
    out = j.get<double>();
    return true;
  } else if constexpr (kIsOptional<T>) {
    if (j.is_null()) {
      out.reset();
      return true;
    }
    typename T::value_type inner{};
    if (!decode_value(j, inner, c)) return false;
    out = std::move(inner);
    return true;
  } else if constexpr (kIsVector<T>) {
    if (!j.is_array()) return c.fail("an array", j);
    out.clear();
    out.resize(j.size());
    for (size_t i = 0; i < j.size(); ++i) {
      c.push("[" + std::to_string(i) + "]");
      bool ok = decode_value(j[i], out[i], c);
      c.pop();
      if (!ok) return false;
    }
    return true;
  } else if constexpr (kIsPair<T>) {
    if (!j.is_array() || j.size() != 2) return c.fail("an array of 2", j);
    c.push("[0]");
    bool ok = decode_value(j[0], out.first, c);
    c.pop();
    if (!ok) return false;
    c.push("[1]");
    ok = decode_value(j[1], out.second, c);
    c.pop();
    return ok;
  } else if constexpr (kIsMap<T>) {
    // Keys strictly increasing, as the encoder writes them: a repeated key is refused rather than
    // letting one copy silently win.
    if (!j.is_array()) return c.fail("an array of [key, value] pairs", j);
    out.clear();
    for (size_t i = 0; i < j.size(); ++i) {
      std::pair<typename T::key_type, typename T::mapped_type> entry;
      c.push("[" + std::to_string(i) + "]");
      bool ok = decode_value(j[i], entry, c);
      if (ok && !out.empty() && !(out.rbegin()->first < entry.first)) {
        ok = c.fail("keys in strictly increasing order (no repeated key)", j[i]);
      }
      c.pop();
      if (!ok) return false;
      out.emplace_hint(out.end(), std::move(entry.first), std::move(entry.second));
    }
    return true;
  } else {
    FieldCounter counter;
    fields(counter, out);
    if (!j.is_array() || j.size() != counter.count) {
      return c.fail("an array of " + std::to_string(counter.count) + " fields", j);
    }
    FieldDecoder decoder{j, c};
    fields(decoder, out);
    return decoder.ok;
  }
}

template <class Variant, size_t I>
bool decode_alternative(json& body, Variant& out, std::string& error) {
  using T = std::variant_alternative_t<I, Variant>;
  T value{};
  DecodeContext c;
  if (!decode_value(body, value, c)) {
    error = std::string(kName<T>) + ": " + c.error();
    return false;
  }
  if constexpr (std::is_same_v<T, SourcesRequest>) {
    if (value.names.size() > kMaxSourcesPerRequest) {
      error = std::string(kName<T>) + ": field names: " + std::to_string(value.names.size()) +
              " names, more than the limit of " + std::to_string(kMaxSourcesPerRequest);
      return false;
    }
  }
  out.template emplace<I>(std::move(value));
  return true;
}

template <class Variant, size_t... I>
bool decode_variant(uint64_t tag, json& body, Variant& out, std::string& error, std::index_sequence<I...>) {
  bool ok = false;
  // Stops at the alternative whose index is `tag` (|| short-circuits); the fold's value is not needed.
  static_cast<void>(
      ((tag == I ? (ok = decode_alternative<Variant, I>(body, out, error), true) : false) || ...));
  return ok;
}

std::string_view kind_name(FrameKind kind) {
  switch (kind) {
    case FrameKind::request:
      return "request";
    case FrameKind::reply:
      return "reply";
    case FrameKind::invocation:
      return "invocation";
    case FrameKind::progress:
      return "progress";
    case FrameKind::result:
      return "result";
  }
  return "?";
}

struct Envelope {
  FrameKind kind = FrameKind::request;
  uint64_t id = 0;
  uint64_t tag = 0;
  json frame;  // the whole frame; the body is frame[4]
};

// Parses and checks the frame envelope: size, MessagePack, shape, version, a kind `accept` takes
// (else "kind N is not a <expected>"), the id. The tag and the body are the caller's to check.
template <class Accept>
Result<Envelope> parse_envelope(std::span<const uint8_t> bytes, const std::string& prefix, Accept accept,
                                std::string_view expected) {
  if (bytes.empty()) return Error{prefix + "empty"};
  if (bytes.size() > kMaxFrameBytes) {
    return Error{prefix + std::to_string(bytes.size()) + " bytes is larger than the limit of " +
                 std::to_string(kMaxFrameBytes)};
  }
  Envelope env;
  json& frame = env.frame;
  BoundedTreeBuilder builder(frame);
  if (!json::sax_parse(bytes.begin(), bytes.end(), &builder, json::input_format_t::msgpack,
                       /*strict=*/true)) {
    return Error{prefix + (builder.error().empty() ? "malformed MessagePack" : builder.error())};
  }
  if (!frame.is_array() || frame.size() != kFrameFields) {
    return Error{prefix + "expected an array of " + std::to_string(kFrameFields) + " elements"};
  }
  const json& version = frame[0];
  if (!version.is_number_unsigned() || version.get<uint64_t>() != kFrameVersion) {
    return Error{prefix + "unsupported version " + version.dump() + " (this build speaks " +
                 std::to_string(kFrameVersion) + ")"};
  }
  const json& frame_kind = frame[1];
  if (!frame_kind.is_number_unsigned() || frame_kind.get<uint64_t>() > kLastFrameKind ||
      !accept(static_cast<FrameKind>(frame_kind.get<uint64_t>()))) {
    return Error{prefix + "kind " + frame_kind.dump() + " is not " + std::string(expected)};
  }
  env.kind = static_cast<FrameKind>(frame_kind.get<uint64_t>());
  if (!frame[2].is_number_unsigned()) return Error{prefix + "request id is not an unsigned integer"};
  env.id = frame[2].get<uint64_t>();
  if (!frame[3].is_number_unsigned()) return Error{prefix + "unknown tag " + frame[3].dump()};
  env.tag = frame[3].get<uint64_t>();
  return env;
}

// Decodes the body of `env` as an alternative of Variant chosen by its tag.
template <class Variant>
Result<uint64_t> decode_body(Envelope& env, const std::string& prefix, Variant& out) {
  constexpr size_t alternatives = std::variant_size_v<Variant>;
  if (env.tag >= alternatives) {
    return Error{prefix + "unknown tag " + env.frame[3].dump() + " (known: 0.." +
                 std::to_string(alternatives - 1) + ")"};
  }
  std::string error;
  if (!decode_variant(env.tag, env.frame[4], out, error, std::make_index_sequence<alternatives>{})) {
    return Error{prefix + error};
  }
  return env.id;
}

// Parses and checks the frame envelope, then decodes the body into `out`. Returns the request id.
template <class Variant>
Result<uint64_t> decode_frame(std::span<const uint8_t> bytes, FrameKind kind, Variant& out) {
  const std::string prefix = "bus " + std::string(kind_name(kind)) + " frame: ";
  Result<Envelope> env = parse_envelope(
      bytes, prefix, [kind](FrameKind k) { return k == kind; }, "a " + std::string(kind_name(kind)));
  if (!env) return env.error();
  return decode_body(*env, prefix, out);
}

// A frame of a kind that carries one struct: tag 0, id 0.
template <class T>
Bytes encode_single(FrameKind kind, const T& value) {
  return encode_frame(kind, 0, std::variant<T>(value));
}

template <class T>
Result<T> decode_single(Envelope& env, const std::string& prefix) {
  std::variant<T> out;
  if (env.id != 0)
    return Error{prefix + "id " + std::to_string(env.id) + " must be 0 in a " +
                 std::string(kind_name(env.kind)) + " frame"};
  Result<uint64_t> id = decode_body(env, prefix, out);
  if (!id) return id.error();
  return std::move(std::get<0>(out));
}

}  // namespace

std::string_view request_type_name(const Request& request) {
  if (request.valueless_by_exception()) return "?";
  return std::visit([](const auto& alt) { return kName<std::decay_t<decltype(alt)>>; }, request);
}

Bytes encode_invocation(const InvocationFrame& frame) {
  return encode_single(FrameKind::invocation, frame);
}
Bytes encode_progress(const ProgressFrame& frame) {
  return encode_single(FrameKind::progress, frame);
}
Bytes encode_result(const ResultFrame& frame) {
  return encode_single(FrameKind::result, frame);
}

Result<FromWorker> decode_from_worker(std::span<const uint8_t> frame) noexcept {
  try {
    const std::string prefix = "worker frame: ";
    Result<Envelope> env = parse_envelope(
        frame, prefix,
        [](FrameKind k) {
          return k == FrameKind::request || k == FrameKind::progress || k == FrameKind::result;
        },
        "one a worker may send (request, progress, result)");
    if (!env) return env.error();
    switch (env->kind) {
      case FrameKind::request: {
        RequestFrame out;
        Result<uint64_t> id = decode_body(*env, "worker frame: request: ", out.request);
        if (!id) return id.error();
        out.id = *id;
        return FromWorker(std::move(out));
      }
      case FrameKind::progress: {
        Result<ProgressFrame> p = decode_single<ProgressFrame>(*env, prefix);
        if (!p) return p.error();
        return FromWorker(*p);
      }
      default: {
        Result<ResultFrame> r = decode_single<ResultFrame>(*env, prefix);
        if (!r) return r.error();
        return FromWorker(std::move(*r));
      }
    }
  } catch (const std::bad_alloc&) {
    return Error{"out of memory"};
  } catch (...) {
    return Error{"bad worker frame"};
  }
}

Result<ToWorker> decode_to_worker(std::span<const uint8_t> frame) noexcept {
  try {
    const std::string prefix = "supervisor frame: ";
    Result<Envelope> env = parse_envelope(
        frame, prefix, [](FrameKind k) { return k == FrameKind::invocation || k == FrameKind::reply; },
        "one a supervisor may send (invocation, reply)");
    if (!env) return env.error();
    if (env->kind == FrameKind::reply) {
      ReplyFrame out;
      Result<uint64_t> id = decode_body(*env, "supervisor frame: reply: ", out.reply);
      if (!id) return id.error();
      out.id = *id;
      return ToWorker(std::move(out));
    }
    Result<InvocationFrame> inv = decode_single<InvocationFrame>(*env, prefix);
    if (!inv) return inv.error();
    return ToWorker(std::move(*inv));
  } catch (const std::bad_alloc&) {
    return Error{"out of memory"};
  } catch (...) {
    return Error{"bad supervisor frame"};
  }
}

Bytes encode_request(uint64_t id, const Request& request) {
  return encode_frame(FrameKind::request, id, request);
}

Bytes encode_reply(uint64_t id, const Reply& reply) {
  return encode_frame(FrameKind::reply, id, reply);
}

Result<RequestFrame> decode_request(std::span<const uint8_t> frame) noexcept {
  try {
    RequestFrame out;
    Result<uint64_t> id = decode_frame(frame, FrameKind::request, out.request);
    if (!id) return id.error();
    out.id = *id;
    return out;
  } catch (const std::bad_alloc&) {
    return Error{"out of memory"};
  } catch (...) {
    // nlohmann/json reports everything through the SAX handler; this is a last line of defence.
    // (The message fits the small-string buffer: building it cannot throw.)
    return Error{"bad bus frame"};
  }
}

Result<ReplyFrame> decode_reply(std::span<const uint8_t> frame) noexcept {
  try {
    ReplyFrame out;
    Result<uint64_t> id = decode_frame(frame, FrameKind::reply, out.reply);
    if (!id) return id.error();
    out.id = *id;
    return out;
  } catch (const std::bad_alloc&) {
    return Error{"out of memory"};
  } catch (...) {
    return Error{"bad bus frame"};
  }
}

}  // namespace skillbox::bus
