// bindings/args.cpp — turning hostile JS arguments into plain C++ values, once.
#include "bindings/args.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <new>
#include <utility>

#include "base/quote.h"
#include "base/utf8.h"
#include "bindings/context_state.h"
#include "bindings/errors.h"
#include "bindings/js_classes.h"

namespace skillbox::bindings {
namespace {

// Longest piece of a skill's string quoted back in an error message ("got \"...\"").
constexpr size_t kMaxQuotedBytes = 40;

std::string label(const Where& where) {
  std::string text(where.name);
  if (!where.key.empty()) {
    text += '.';
    text += where.key;
  }
  return text;
}

// "<function>: <name>[.<key>] <rest>"
std::string message(const Where& where, std::string_view rest) {
  std::string text(where.function);
  text += ": ";
  text += label(where);
  text += ' ';
  text += rest;
  return text;
}

std::string number_text(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  return ec == std::errc() ? std::string(buf, end) : std::string("a number");
}

JSValue throw_too_large(JSContext* ctx, const Where& where, size_t size, size_t max, const char* unit) {
  return throw_range_error(ctx, message(where, "is too large (" + std::to_string(size) + " " + unit +
                                                   "; the limit is " + std::to_string(max) + ")"));
}

// Reads the bytes of a typed array or ArrayBuffer without running JS. A detached buffer reads as
// empty (the only way these calls fail for a value of the right class).
bool typed_array_view(JSContext* ctx, JSValueConst value, ByteView& out) {
  size_t offset = 0;
  size_t length = 0;
  const Value buffer(ctx, JS_GetTypedArrayBuffer(ctx, value, &offset, &length, nullptr));
  if (buffer.is_exception()) {
    out = {};
    return take_catchable_exception(ctx);
  }
  size_t buffer_size = 0;
  uint8_t* data = JS_GetArrayBuffer(ctx, &buffer_size, buffer.get());  // the typed array keeps it alive
  if (data == nullptr || offset + length > buffer_size) {
    out = {};
    return data != nullptr || take_catchable_exception(ctx);
  }
  out = {data + offset, length};
  return true;
}

bool array_buffer_view(JSContext* ctx, JSValueConst value, ByteView& out) {
  size_t size = 0;
  uint8_t* data = JS_GetArrayBuffer(ctx, &size, value);
  if (data == nullptr) {
    out = {};
    return take_catchable_exception(ctx);
  }
  out = {data, size};
  return true;
}

// Calls a getter captured from %DataView.prototype% (native, brand-checked: no skill code runs).
bool dataview_view(JSContext* ctx, JSValueConst value, ByteView& out) {
  out = {};
  const ContextState* captured = context_state_with_typed_arrays(ctx);  // built: `value` is a DataView
  if (captured == nullptr) return false;
  const ContextState& state = *captured;
  const Value buffer(ctx, JS_Call(ctx, state.dataview_buffer.get(), value, 0, nullptr));
  const Value offset(ctx, JS_Call(ctx, state.dataview_byte_offset.get(), value, 0, nullptr));
  const Value length(ctx, JS_Call(ctx, state.dataview_byte_length.get(), value, 0, nullptr));
  bool ok = true;
  if (buffer.is_exception() || offset.is_exception() || length.is_exception()) {
    ok = take_catchable_exception(ctx);  // detached: byteOffset/byteLength throw; treat as empty
  } else {
    int64_t off = 0;
    int64_t len = 0;
    size_t size = 0;
    uint8_t* data = nullptr;
    if (JS_ToInt64(ctx, &off, offset.get()) == 0 && JS_ToInt64(ctx, &len, length.get()) == 0 && off >= 0 &&
        len >= 0)
      data = JS_GetArrayBuffer(ctx, &size, buffer.get());
    if (data == nullptr) {
      ok = take_catchable_exception(ctx);
    } else if (static_cast<uint64_t>(off) + static_cast<uint64_t>(len) <= size) {
      out = {data + off, static_cast<size_t>(len)};
    }
  }
  return ok;
}

}  // namespace

// ---- StringBytes ----------------------------------------------------------------------------------

bool string_bytes(JSContext* ctx, JSValueConst value, const Where& where, StringBytes& out,
                  const StringRules& rules) {
  const int tag = JS_VALUE_GET_TAG(value);
  const bool primitive = tag == JS_TAG_UNDEFINED || tag == JS_TAG_NULL || tag == JS_TAG_BOOL ||
                         tag == JS_TAG_INT || JS_TAG_IS_FLOAT64(tag) || tag == JS_TAG_BIG_INT;
  if (tag != JS_TAG_STRING && !(rules.coerce_primitives && primitive)) {
    throw_wrong_type(ctx, where, "a string", value);
    return false;
  }
  // For these tags QuickJS converts natively (number and BigInt printing); no JS can run.
  StringBytes result;
  result.text_ = CString(ctx, value);
  if (!result.text_.ok()) return false;  // out of memory
  const char* data = result.text_.data();
  const size_t size = result.text_.size();
  const size_t surrogate = base::utf8::find_lone_surrogate({data, size});
  if (surrogate != std::string_view::npos && rules.lone_surrogates == LoneSurrogates::reject) {
    throw_type_error(ctx, message(where, "must be well-formed Unicode (it contains a lone surrogate)"));
    return false;
  }
  if (size > rules.max_bytes) {
    throw_too_large(ctx, where, size, rules.max_bytes, "bytes of UTF-8");
    return false;
  }
  if (surrogate != std::string_view::npos) {
    // The bytes are QuickJS's buffer and read-only to us (for a pure-ASCII string it is the string's
    // own storage; that a string holding a surrogate gets a fresh one is an engine detail not relied
    // on): fix up a copy of ours. The copy takes the buffer's place on the skill's heap limit.
    HeapCharge charge(ctx);
    try {
      result.fixed_.assign(data, size);
    } catch (const std::bad_alloc&) {
      JS_ThrowOutOfMemory(ctx);
      return false;
    }
    result.text_.reset();
    if (!charge.cover(size + 1)) return false;  // out of memory pending
    base::utf8::replace_lone_surrogates(result.fixed_.data(), size);
    result.fixed_charge_ = std::move(charge);
    result.fixed_up_ = true;
  }
  out = std::move(result);
  return true;
}

// A request payload copied out of the heap is host memory of the invocation (the Endpoint counts it
// from when it receives the request): checked against the memory limit before the copy is made, so
// a copy that cannot fit ends the run as memory_limit instead of being allocated.
namespace {
bool fits_in_memory(JSContext* ctx, size_t size) {
  HeapCharge charge(ctx);
  return charge.cover(size);
}
}  // namespace

// ---- single values --------------------------------------------------------------------------------

bool to_string(JSContext* ctx, JSValueConst value, const Where& where, std::string& out,
               const StringRules& rules) {
  StringBytes bytes;
  if (!string_bytes(ctx, value, where, bytes, rules)) return false;
  out.assign(bytes.data(), bytes.size());
  return true;
}

bool to_bytes(JSContext* ctx, JSValueConst value, const Where& where, bus::Bytes& out, size_t max_bytes) {
  if (!js_class::has_class(value, js_class::kUint8Array)) {
    throw_wrong_type(ctx, where, "a Uint8Array", value);
    return false;
  }
  ByteView view;
  if (!typed_array_view(ctx, value, view)) return false;
  if (view.size > max_bytes) {
    throw_too_large(ctx, where, view.size, max_bytes, "bytes");
    return false;
  }
  if (!fits_in_memory(ctx, view.size)) return false;
  out.assign(view.data, view.data + view.size);
  return true;
}

bool to_string_or_bytes(JSContext* ctx, JSValueConst value, const Where& where, bus::Bytes& out,
                        size_t max_bytes) {
  if (JS_IsString(value)) {
    StringBytes text;
    if (!string_bytes(ctx, value, where, text,
                      {.max_bytes = max_bytes, .lone_surrogates = LoneSurrogates::replace}))
      return false;
    if (!fits_in_memory(ctx, text.size())) return false;
    const auto* begin = reinterpret_cast<const uint8_t*>(text.data());
    out.assign(begin, begin + text.size());
    return true;
  }
  if (!js_class::has_class(value, js_class::kUint8Array)) {
    throw_wrong_type(ctx, where, "a string or a Uint8Array", value);
    return false;
  }
  return to_bytes(ctx, value, where, out, max_bytes);
}

bool to_buffer_source(JSContext* ctx, JSValueConst value, const Where& where, ByteView& out) {
  if (js_class::typed_array_class(value) != 0) return typed_array_view(ctx, value, out);
  if (js_class::has_class(value, js_class::kArrayBuffer)) return array_buffer_view(ctx, value, out);
  if (js_class::has_class(value, js_class::kDataView)) return dataview_view(ctx, value, out);
  throw_wrong_type(ctx, where, "an ArrayBuffer, a TypedArray or a DataView", value);
  return false;
}

bool to_integer(JSContext* ctx, JSValueConst value, const Where& where, int64_t min, int64_t max,
                int64_t& out) {
  const auto range = [&] { return "between " + std::to_string(min) + " and " + std::to_string(max); };
  const int tag = JS_VALUE_GET_TAG(value);
  if (tag == JS_TAG_INT) {
    const int64_t v = JS_VALUE_GET_INT(value);
    if (v < min || v > max) {
      throw_range_error(ctx, message(where, "must be " + range() + ", got " + std::to_string(v)));
      return false;
    }
    out = v;
    return true;
  }
  if (!JS_TAG_IS_FLOAT64(tag)) {
    throw_wrong_type(ctx, where, "an integer " + range(), value);
    return false;
  }
  const double d = JS_VALUE_GET_FLOAT64(value);
  if (!std::isfinite(d) || std::trunc(d) != d) {
    throw_type_error(ctx, message(where, "must be an integer " + range() + ", got " + number_text(d)));
    return false;
  }
  // Range-check as a double first: casting a double outside int64_t's range is undefined behaviour.
  constexpr double kTwoTo63 = 9223372036854775808.0;
  if (d < -kTwoTo63 || d >= kTwoTo63 || static_cast<int64_t>(d) < min || static_cast<int64_t>(d) > max) {
    throw_range_error(ctx, message(where, "must be " + range() + ", got " + number_text(d)));
    return false;
  }
  out = static_cast<int64_t>(d);
  return true;
}

bool to_boolean(JSContext* ctx, JSValueConst value, const Where& where, bool& out) {
  if (!JS_IsBool(value)) {
    throw_wrong_type(ctx, where, "a boolean", value);
    return false;
  }
  out = JS_VALUE_GET_BOOL(value) != 0;
  return true;
}

bool to_string_pairs(JSContext* ctx, JSValueConst value, const Where& where,
                     std::vector<std::pair<std::string, std::string>>& out, size_t max_entries,
                     const StringRules& key_rules, const StringRules& value_rules) {
  if (!JS_IsObject(value) || JS_IsFunction(ctx, value)) {
    throw_wrong_type(ctx, where, "an object of strings", value);
    return false;
  }
  PropertyNames props;
  if (!props.list(ctx, value, JS_GPN_STRING_MASK | JS_GPN_ENUM_ONLY)) {
    Value cause;
    if (take_catchable_exception(ctx, &cause))
      throw_type_error(ctx, message(where, "could not be read (listing its keys threw an exception)"),
                       std::move(cause));
    return false;
  }
  const uint32_t count = props.size();
  if (count > max_entries) {
    throw_too_large(ctx, where, count, max_entries, "entries");
    return false;
  }
  std::vector<std::pair<std::string, std::string>> pairs;
  pairs.reserve(count);
  bool ok = true;
  for (uint32_t i = 0; ok && i < count; ++i) {
    std::pair<std::string, std::string> pair;
    const Value key(ctx, JS_AtomToString(ctx, props[i].atom));
    ok = !key.is_exception() && to_string(ctx, key.get(), where, pair.first, key_rules);
    if (!ok) break;
    const Value item = property(ctx, value, props[i].atom);
    if (item.is_exception()) {
      Value cause;
      if (take_catchable_exception(ctx, &cause))
        throw_type_error(
            ctx,
            message(where, "could not be read (reading " + base::quote(pair.first, kMaxQuotedBytes) +
                               " threw an exception)"),
            std::move(cause));
      ok = false;
      break;
    }
    // Name the entry in errors: "headers[\"x-id\"] must be a string".
    const std::string entry = std::string(where.name) + "[" + base::quote(pair.first, kMaxQuotedBytes) + "]";
    ok = to_string(ctx, item.get(), Where{where.function, entry}, pair.second, value_rules);
    if (ok) pairs.push_back(std::move(pair));
  }
  if (ok) out = std::move(pairs);
  return ok;
}

// ---- messages -------------------------------------------------------------------------------------

std::string_view describe(JSContext* ctx, JSValueConst value) {
  const int tag = JS_VALUE_GET_TAG(value);
  switch (tag) {
    case JS_TAG_UNDEFINED:
      return "undefined";
    case JS_TAG_NULL:
      return "null";
    case JS_TAG_BOOL:
      return "boolean";
    case JS_TAG_INT:
      return "number";
    case JS_TAG_STRING:
      return "string";
    case JS_TAG_SYMBOL:
      return "symbol";
    case JS_TAG_BIG_INT:
      return "bigint";
    case JS_TAG_OBJECT:
      break;
    default:
      return JS_TAG_IS_FLOAT64(tag) ? "number" : "value";
  }
  if (const JSClassID ta = js_class::typed_array_class(value); ta != 0) return js_class::typed_array_name(ta);
  if (js_class::has_class(value, js_class::kArrayBuffer)) return "ArrayBuffer";
  if (js_class::has_class(value, js_class::kDataView)) return "DataView";
  // A Proxy is reported as what it pretends to be only through traps; do not ask.
  if (js_class::has_class(value, js_class::kProxy)) return "object";
  // JS_IsFunction and JS_IsArray read the class only (a Proxy was excluded above).
  if (JS_IsFunction(ctx, value)) return "function";
  if (JS_IsArray(ctx, value) > 0) return "array";
  return "object";
}

JSValue throw_wrong_type(JSContext* ctx, const Where& where, std::string_view expected, JSValueConst value) {
  std::string rest = "must be ";
  rest += expected;
  rest += ", got ";
  rest += describe(ctx, value);
  return throw_type_error(ctx, message(where, rest));
}

JSValue detail::throw_not_one_of(JSContext* ctx, const Where& where,
                                 const std::vector<std::string_view>& names, std::string_view got) {
  std::string rest = "must be one of ";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) rest += ", ";
    rest += base::quote(names[i], kMaxQuotedBytes);
  }
  rest += ", got ";
  rest += base::quote(got, kMaxQuotedBytes);
  return throw_type_error(ctx, message(where, rest));
}

// ---- Options --------------------------------------------------------------------------------------

bool Options::open(JSContext* ctx, JSValueConst value, const Where& where, Options& out) {
  if (!JS_IsUndefined(value) && !JS_IsNull(value) && !JS_IsObject(value)) {
    throw_wrong_type(ctx, where, "an object", value);
    return false;
  }
  out.ctx_ = ctx;
  out.object_ = value;
  out.function_ = where.function;
  out.name_ = where.name;
  return true;
}

bool Options::read(std::string_view key, Value& value, bool& present) const {
  value = Value();
  present = false;
  if (!JS_IsObject(object_)) return true;
  const Atom atom(ctx_, key);
  if (!atom.ok()) return false;
  Value read = property(ctx_, object_, atom.get());
  if (read.is_exception()) {
    Value cause;
    if (take_catchable_exception(ctx_, &cause))
      throw_type_error(ctx_,
                       std::string(function_) + ": reading " + label(where(key)) + " threw an exception",
                       std::move(cause));
    return false;
  }
  present = !read.is_undefined();
  value = std::move(read);
  return true;
}

bool Options::get(std::string_view key, Value& out) const {
  bool present = false;
  return read(key, out, present);
}

bool Options::string(std::string_view key, std::string& out, const StringRules& rules) const {
  Value value;
  bool present = false;
  if (!read(key, value, present)) return false;
  return !present || to_string(ctx_, value.get(), where(key), out, rules);
}

bool Options::string(std::string_view key, std::optional<std::string>& out, const StringRules& rules) const {
  Value value;
  bool present = false;
  if (!read(key, value, present)) return false;
  if (!present) return true;
  std::string text;
  if (!to_string(ctx_, value.get(), where(key), text, rules)) return false;
  out = std::move(text);
  return true;
}

bool Options::integer(std::string_view key, int64_t min, int64_t max, int64_t& out) const {
  Value value;
  bool present = false;
  if (!read(key, value, present)) return false;
  return !present || to_integer(ctx_, value.get(), where(key), min, max, out);
}

bool Options::integer(std::string_view key, int64_t min, int64_t max, std::optional<int64_t>& out) const {
  int64_t number = 0;
  Value value;
  bool present = false;
  if (!read(key, value, present)) return false;
  if (!present) return true;
  if (!to_integer(ctx_, value.get(), where(key), min, max, number)) return false;
  out = number;
  return true;
}

bool Options::boolean(std::string_view key, bool& out) const {
  Value value;
  bool present = false;
  if (!read(key, value, present)) return false;
  return !present || to_boolean(ctx_, value.get(), where(key), out);
}

bool Options::truthy(std::string_view key, bool& out) const {
  Value value;
  bool present = false;
  if (!read(key, value, present)) return false;
  // ToBoolean never runs JS (objects are simply true).
  if (present) out = JS_ToBool(ctx_, value.get()) > 0;
  return true;
}

bool Options::string_or_bytes(std::string_view key, bus::Bytes& out, size_t max_bytes) const {
  Value value;
  bool present = false;
  if (!read(key, value, present)) return false;
  return !present || to_string_or_bytes(ctx_, value.get(), where(key), out, max_bytes);
}

bool Options::string_pairs(std::string_view key, std::vector<std::pair<std::string, std::string>>& out,
                           size_t max_entries, const StringRules& key_rules,
                           const StringRules& value_rules) const {
  Value value;
  bool present = false;
  if (!read(key, value, present)) return false;
  const std::string name = label(where(key));
  return !present ||
         to_string_pairs(ctx_, value.get(), Where{function_, name}, out, max_entries, key_rules, value_rules);
}

// ---- Args -----------------------------------------------------------------------------------------

bool Args::require(int n) const {
  if (argc_ >= n) return true;
  std::string text(function_);
  text += ": " + std::to_string(n) + (n == 1 ? " argument" : " arguments") + " required, but only " +
          std::to_string(argc_) + " present";
  throw_type_error(ctx_, text);
  return false;
}

}  // namespace skillbox::bindings
