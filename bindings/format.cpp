// bindings/format.cpp — turning the arguments of log()/console.*() into one line of text, on a budget.
#include "bindings/format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string_view>
#include <vector>

#include "bindings/args.h"
#include "bindings/context_state.h"
#include "bindings/errors.h"
#include "bindings/js_classes.h"
#include "bindings/owners.h"

namespace skillbox::bindings {
namespace {

// Result of asking skill code for something (a getter, a trap, toJSON).
enum class Read : uint8_t {
  ok,     // the value is in hand
  threw,  // it threw; show a marker and go on
  abort,  // the run is interrupted: stop, the exception stays pending
};

class Formatter {
 public:
  Formatter(JSContext* ctx, const FormatLimits& limits, std::string& out)
      : ctx_(ctx), limits_(limits), out_(out), start_(out.size()) {}

  bool message(int argc, JSValueConst* argv);

 private:
  [[nodiscard]] bool full() const { return stopped_ || out_.size() - start_ > limits_.max_bytes; }
  void append(std::string_view text);
  void append_json_string(std::string_view text);
  void append_count_more(uint64_t more, const char* what, bool first);

  // Each returns false only to abort (exception pending).
  bool value(JSValueConst v, int depth, bool top, bool allow_to_json = true);
  bool string(JSValueConst v, bool top);
  bool number(JSValueConst v);
  bool bigint(JSValueConst v);
  bool symbol(JSValueConst v);
  bool object(JSValueConst v, int depth, bool top, bool allow_to_json);
  bool function(JSValueConst v);
  bool error(JSValueConst v, bool top);
  bool regexp(JSValueConst v);
  bool typed_array(JSValueConst v, JSClassID cls, int depth);
  bool array(JSValueConst v, int depth);
  bool plain_object(JSValueConst v, int depth);
  bool substitute(char spec, JSValueConst arg);

  // Classifies `result` of a call into skill code; on threw the exception has been taken.
  Read outcome(const Value& result);
  // Reads `key` with [[Get]] as a string; `text` keeps `fallback` unless the read gave a string.
  Read string_property(JSValueConst obj, const char* key, std::string& text);
  // The UTF-8 of what can be shown of the string `str`: huge strings are cut before conversion.
  bool shown_prefix(JSValueConst str, StringBytes& out);
  bool on_path(JSValueConst v) const {
    return std::find(path_.begin(), path_.end(), JS_VALUE_GET_PTR(v)) != path_.end();
  }

  JSContext* ctx_;
  const FormatLimits& limits_;
  std::string& out_;
  size_t start_;                   // out_ may already hold text; the budget counts from here
  std::vector<const void*> path_;  // objects being formatted, outermost first: cycle detection
  size_t keys_listed_ = 0;
  size_t values_ = 0;
  bool stopped_ = false;  // the value budget ran out
};

// A StringBytes view of a JS string (never fails on type: callers pass strings; false = OOM).
bool utf8_of(JSContext* ctx, JSValueConst str, StringBytes& out) {
  return string_bytes(ctx, str, Where{"log", "value"}, out, {.lone_surrogates = LoneSurrogates::replace});
}

bool Formatter::shown_prefix(JSValueConst str, StringBytes& out) {
  // One more code unit than bytes could ever be shown, plus one so that a surrogate pair split by
  // the cut lies past the shown part. Converting only that much keeps log(hugeString) O(cap):
  // converting the whole string would scan (or copy, on the skill's heap) every byte of it.
  const size_t units = limits_.max_bytes + 2;
  bool long_string = false;
  {
    const Value length = property(ctx_, str, "length");  // of a string primitive: native, no JS
    long_string = JS_VALUE_GET_TAG(length.get()) == JS_TAG_INT &&
                  static_cast<size_t>(JS_VALUE_GET_INT(length.get())) > units;
  }
  if (!long_string) return utf8_of(ctx_, str, out);
  // %String.prototype.slice% captured at install: native, whatever the skill did to the prototype.
  const Value start(ctx_, JS_NewInt32(ctx_, 0));
  const Value end(ctx_, JS_NewInt64(ctx_, static_cast<int64_t>(units)));
  JSValueConst args[] = {start.get(), end.get()};
  const Value prefix(ctx_, JS_Call(ctx_, context_state(ctx_).string_slice.get(), str, 2, args));
  if (prefix.is_exception()) return false;  // out of memory
  return utf8_of(ctx_, prefix.get(), out);  // `out` keeps its own reference to the string
}

void Formatter::append(std::string_view text) {
  if (full()) return;
  const size_t room = limits_.max_bytes + 1 - (out_.size() - start_);  // reaching just past the cap
  if (text.size() <= room) {
    out_.append(text);
    return;
  }
  size_t cut = room;
  while (cut < text.size() && (static_cast<uint8_t>(text[cut]) & 0xC0) == 0x80) ++cut;  // end the char
  out_.append(text.substr(0, cut));
}

void Formatter::append_json_string(std::string_view text) {
  append("\"");
  size_t i = 0;
  while (i < text.size() && !full()) {
    size_t run = i;
    while (run < text.size() && text[run] != '"' && text[run] != '\\' &&
           static_cast<uint8_t>(text[run]) >= 0x20)
      ++run;
    append(text.substr(i, run - i));
    if (run == text.size()) break;
    const auto c = static_cast<uint8_t>(text[run]);
    switch (c) {
      case '"':
        append("\\\"");
        break;
      case '\\':
        append("\\\\");
        break;
      case '\n':
        append("\\n");
        break;
      case '\r':
        append("\\r");
        break;
      case '\t':
        append("\\t");
        break;
      case '\b':
        append("\\b");
        break;
      case '\f':
        append("\\f");
        break;
      default: {
        static constexpr char kHex[] = "0123456789abcdef";
        const char escape[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
        append({escape, sizeof escape});
      }
    }
    i = run + 1;
  }
  append("\"");
}

void Formatter::append_count_more(uint64_t more, const char* what, bool first) {
  if (more == 0) return;
  append(first ? "... " : ",... ");
  append(std::to_string(more));
  append(" more ");
  append(what);
}

Read Formatter::outcome(const Value& result) {
  if (!result.is_exception()) return Read::ok;
  return take_catchable_exception(ctx_) ? Read::threw : Read::abort;
}

Read Formatter::string_property(JSValueConst obj, const char* key, std::string& text) {
  const Value v = property(ctx_, obj, key);
  const Read read = outcome(v);
  if (read != Read::ok) return read;
  if (v.is_string()) {
    StringBytes bytes;
    if (!utf8_of(ctx_, v.get(), bytes)) return Read::abort;
    text.assign(bytes.view());
  }
  return Read::ok;
}

bool Formatter::message(int argc, JSValueConst* argv) {
  int next = 0;
  if (argc > 0 && JS_IsString(argv[0])) {
    StringBytes format;
    if (!shown_prefix(argv[0], format)) return false;
    const std::string_view text = format.view();
    next = 1;
    size_t i = 0;
    while (i < text.size() && !full()) {
      const size_t percent = text.find('%', i);
      append(text.substr(i, percent == std::string_view::npos ? std::string_view::npos : percent - i));
      if (percent == std::string_view::npos || percent + 1 >= text.size()) {
        if (percent != std::string_view::npos) append("%");
        break;
      }
      const char spec = text[percent + 1];
      i = percent + 2;
      if (spec == '%') {
        append("%");
      } else if (std::string_view("sdifjoOc").find(spec) != std::string_view::npos && next < argc) {
        if (!substitute(spec, argv[next++])) return false;
      } else {
        append(text.substr(percent, 2));  // unknown directive, or no argument left: kept as written
      }
    }
  }
  for (; next < argc && !full(); ++next) {
    if (next > 0) append(" ");
    if (!value(argv[next], 0, true)) return false;
  }
  return true;
}

bool Formatter::substitute(char spec, JSValueConst arg) {
  switch (spec) {
    case 'c':
      return true;  // CSS for browser consoles: consumed, not shown
    case 's':
      return value(arg, 0, true);
    case 'j':
    case 'o':
    case 'O':
      return value(arg, 0, false);
    default:
      break;
  }
  // %d %i %f: numbers; strings and other primitives as Number() reads them (no JS runs for
  // primitives); objects are NaN rather than being asked for valueOf.
  if (JS_IsBigInt(ctx_, arg) && spec != 'f') return bigint(arg);
  double d = NAN;
  if (!JS_IsObject(arg) && !JS_IsSymbol(arg) && !JS_IsBigInt(ctx_, arg) && JS_ToFloat64(ctx_, &d, arg) < 0)
    return false;
  if (spec == 'i') d = std::trunc(d);
  const Value number_value(ctx_, JS_NewFloat64(ctx_, d));
  return number(number_value.get());
}

bool Formatter::value(JSValueConst v, int depth, bool top, bool allow_to_json) {
  if (full()) return true;
  if (++values_ > limits_.max_values) {
    append("...");
    stopped_ = true;
    return true;
  }
  const int tag = JS_VALUE_GET_TAG(v);
  switch (tag) {
    case JS_TAG_STRING:
      return string(v, top);
    case JS_TAG_INT:
      return number(v);
    case JS_TAG_BOOL:
      append(JS_VALUE_GET_BOOL(v) ? "true" : "false");
      return true;
    case JS_TAG_NULL:
      append("null");
      return true;
    case JS_TAG_UNDEFINED:
      append("undefined");
      return true;
    case JS_TAG_BIG_INT:
      return bigint(v);
    case JS_TAG_SYMBOL:
      return symbol(v);
    case JS_TAG_OBJECT:
      return object(v, depth, top, allow_to_json);
    default:
      if (JS_TAG_IS_FLOAT64(tag)) return number(v);
      append("[unknown]");
      return true;
  }
}

bool Formatter::string(JSValueConst v, bool top) {
  StringBytes bytes;
  if (!shown_prefix(v, bytes)) return false;
  if (top)
    append(bytes.view());
  else
    append_json_string(bytes.view());
  return true;
}

bool Formatter::number(JSValueConst v) {
  if (JS_VALUE_GET_TAG(v) == JS_TAG_INT) {
    char buf[16];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, JS_VALUE_GET_INT(v));
    append({buf, static_cast<size_t>(end - buf)});
    return true;
  }
  const double d = JS_VALUE_GET_FLOAT64(v);
  if (d == 0 && std::signbit(d)) {
    append("-0");
    return true;
  }
  const CString text(ctx_, v);  // QuickJS's Number::toString; no JS runs
  if (!text.ok()) return false;
  append(text.view());
  return true;
}

bool Formatter::bigint(JSValueConst v) {
  const CString text(ctx_, v);
  if (!text.ok()) return false;
  append(text.view());
  append("n");
  return true;
}

bool Formatter::symbol(JSValueConst v) {
  const Atom atom = Atom::of_value(ctx_, v);  // a symbol is its own atom; its string is the description
  if (!atom.ok()) return false;
  const Value description(ctx_, JS_AtomToString(ctx_, atom.get()));
  if (description.is_exception()) return false;
  StringBytes bytes;
  if (!utf8_of(ctx_, description.get(), bytes)) return false;
  append("Symbol(");
  append(bytes.view());
  append(")");
  return true;
}

bool Formatter::object(JSValueConst v, int depth, bool top, bool allow_to_json) {
  if (on_path(v)) {
    append("[Circular]");
    return true;
  }
  if (JS_IsFunction(ctx_, v)) return function(v);
  if (JS_IsError(ctx_, v)) return error(v, top);
  if (const JSClassID cls = js_class::typed_array_class(v); cls != 0) return typed_array(v, cls, depth);
  if (js_class::has_class(v, js_class::kArrayBuffer)) {
    size_t size = 0;
    if (JS_GetArrayBuffer(ctx_, &size, v) == nullptr && !take_catchable_exception(ctx_)) return false;
    append("[ArrayBuffer: " + std::to_string(size) + " bytes]");
    return true;
  }
  if (js_class::has_class(v, js_class::kRegExp)) return regexp(v);
  static constexpr std::pair<JSClassID, std::string_view> kOpaque[] = {
      {js_class::kDataView, "[DataView]"}, {js_class::kMap, "[Map]"},
      {js_class::kSet, "[Set]"},           {js_class::kWeakMap, "[WeakMap]"},
      {js_class::kWeakSet, "[WeakSet]"},   {js_class::kPromise, "[Promise]"},
  };
  for (const auto& [cls, text] : kOpaque) {
    if (js_class::has_class(v, cls)) {
      append(text);
      return true;
    }
  }

  if (allow_to_json) {
    // JSON.stringify's SerializeJSONProperty: a callable toJSON replaces the value (Date, and
    // classes that define one). Its result is formatted without asking it for toJSON again.
    Value to_json = property(ctx_, v, "toJSON");
    Read read = outcome(to_json);
    if (read == Read::abort) return false;
    if (read == Read::threw) {  // a getter or Proxy get trap on the way to toJSON
      append("[Getter threw]");
      return true;
    }
    if (JS_IsFunction(ctx_, to_json.get())) {
      Value result;
      {
        const Value key(ctx_, JS_NewStringLen(ctx_, "", 0));
        JSValueConst argv[] = {key.get()};
        result = Value(ctx_, JS_Call(ctx_, to_json.get(), v, 1, argv));
      }
      to_json.reset();  // not needed while the result is formatted
      read = outcome(result);
      if (read == Read::abort) return false;
      if (read == Read::threw) {
        append("[toJSON threw]");
        return true;
      }
      const bool same = result.is_object() && JS_VALUE_GET_PTR(result.get()) == JS_VALUE_GET_PTR(v);
      if (!same) {
        path_.push_back(JS_VALUE_GET_PTR(v));
        const bool ok = value(result.get(), depth, top, false);
        path_.pop_back();
        return ok;
      }
      // toJSON returned the object itself: show the object.
    }
  }

  // A revoked Proxy (or a chain of Proxies too deep to follow) makes IsArray throw: show an object.
  const int is_array = JS_IsArray(ctx_, v);
  if (is_array < 0 && !take_catchable_exception(ctx_)) return false;
  if (depth >= limits_.max_depth) {
    append(is_array > 0 ? "[Array]" : "[Object]");
    return true;
  }
  path_.push_back(JS_VALUE_GET_PTR(v));
  const bool ok = is_array > 0 ? array(v, depth) : plain_object(v, depth);
  path_.pop_back();
  return ok;
}

bool Formatter::function(JSValueConst v) {
  // The own `name` data property only: a getter there would be skill code for no gain.
  std::string name;
  const Atom atom(ctx_, "name");
  if (!atom.ok()) return false;
  PropertyDescriptor desc;
  const int found = own_property(ctx_, v, atom.get(), desc);  // a Proxy's trap may run and throw
  if (found < 0 && !take_catchable_exception(ctx_)) return false;
  if (found > 0 && (desc.flags & JS_PROP_GETSET) == 0 && desc.value.is_string()) {
    StringBytes bytes;
    if (utf8_of(ctx_, desc.value.get(), bytes)) name.assign(bytes.view());
  }
  append(name.empty() ? std::string_view("[Function (anonymous)]") : "[Function: ");
  if (!name.empty()) {
    append(name);
    append("]");
  }
  return true;
}

bool Formatter::error(JSValueConst v, bool top) {
  std::string name = "Error";
  std::string message;
  if (string_property(v, "name", name) == Read::abort ||
      string_property(v, "message", message) == Read::abort)
    return false;
  if (!top) append("[");
  append(name);
  if (!message.empty()) {
    append(": ");
    append(message);
  }
  if (!top) append("]");
  return true;
}

bool Formatter::regexp(JSValueConst v) {
  std::string source;
  std::string flags;
  if (string_property(v, "source", source) == Read::abort ||
      string_property(v, "flags", flags) == Read::abort)
    return false;
  append("/");
  append(source);
  append("/");
  append(flags);
  return true;
}

bool Formatter::typed_array(JSValueConst v, JSClassID cls, int depth) {
  size_t byte_length = 0;
  size_t element_size = 1;
  const bool detached =  // the typed array keeps its buffer alive; this reference goes at once
      Value(ctx_, JS_GetTypedArrayBuffer(ctx_, v, nullptr, &byte_length, &element_size)).is_exception();
  if (detached) {  // no elements
    if (!take_catchable_exception(ctx_)) return false;
    byte_length = 0;
  }
  const uint64_t count = byte_length / element_size;
  append(js_class::typed_array_name(cls));
  append("(" + std::to_string(count) + ") [");
  const uint64_t shown = std::min<uint64_t>(count, limits_.max_entries);
  for (uint64_t i = 0; i < shown && !full(); ++i) {
    if (i > 0) append(",");
    // Integer-indexed element read: no prototype lookup, no JS.
    const Value item = element(ctx_, v, static_cast<uint32_t>(i));
    if (item.is_exception() || !value(item.get(), depth + 1, false)) return false;
  }
  append_count_more(count - shown, "items", shown == 0);
  append("]");
  return true;
}

bool Formatter::array(JSValueConst v, int depth) {
  uint64_t length = 0;
  {
    const Value length_value = property(ctx_, v, "length");
    const Read read = outcome(length_value);
    if (read == Read::abort) return false;
    if (read == Read::threw) {
      append("[Array: length threw]");
      return true;
    }
    const int tag = JS_VALUE_GET_TAG(length_value.get());
    if (tag == JS_TAG_INT) {
      length = static_cast<uint64_t>(std::max(0, JS_VALUE_GET_INT(length_value.get())));
    } else if (JS_TAG_IS_FLOAT64(tag)) {
      const double d = JS_VALUE_GET_FLOAT64(length_value.get());
      length = d > 0 ? static_cast<uint64_t>(std::min(d, 9007199254740991.0)) : 0;  // NaN reads as 0
    }
  }

  append("[");
  const uint64_t shown = std::min<uint64_t>(length, limits_.max_entries);
  for (uint64_t i = 0; i < shown && !full(); ++i) {
    if (i > 0) append(",");
    const Value item = element(ctx_, v, static_cast<uint32_t>(i));
    const Read got = outcome(item);
    if (got == Read::abort) return false;
    if (got == Read::threw) {
      append("[Getter threw]");
      continue;
    }
    if (!value(item.get(), depth + 1, false)) return false;
  }
  append_count_more(length - shown, "items", shown == 0);
  append("]");
  return true;
}

bool Formatter::plain_object(JSValueConst v, int depth) {
  if (keys_listed_ >= limits_.max_keys_listed) {
    append("[Object]");
    return true;
  }
  // All own keys, symbols and non-enumerables included: their number is the native work QuickJS just
  // did (an object with a million hidden keys costs that much to list), so it is what the key budget
  // counts. Shown are the enumerable string keys, as Object.keys gives them.
  PropertyNames props;
  if (!props.list(ctx_, v, JS_GPN_STRING_MASK | JS_GPN_SYMBOL_MASK | JS_GPN_SET_ENUM)) {
    if (!take_catchable_exception(ctx_)) return false;
    append("[Keys threw]");
    return true;
  }
  const uint32_t count = props.size();
  keys_listed_ += count;
  bool ok = true;
  uint64_t shown = 0;
  uint64_t more = 0;
  append("{");
  for (uint32_t i = 0; ok && i < count && !full(); ++i) {
    if (!props[i].is_enumerable) continue;
    StringBytes key_bytes;
    {
      const Value key(ctx_, JS_AtomToValue(ctx_, props[i].atom));
      if (key.is_exception()) {
        ok = false;
        break;
      }
      const bool is_string = key.is_string();
      if (!is_string || shown >= limits_.max_entries) {
        more += is_string ? 1 : 0;
        continue;
      }
      ok = utf8_of(ctx_, key.get(), key_bytes);
      if (!ok) break;
    }
    if (shown++ > 0) append(",");
    append_json_string(key_bytes.view());
    append(":");
    const Value item = property(ctx_, v, props[i].atom);
    const Read got = outcome(item);
    if (got == Read::abort) {
      ok = false;
    } else if (got == Read::threw) {
      append("[Getter threw]");
    } else {
      ok = value(item.get(), depth + 1, false);
    }
  }
  if (!ok) return false;
  append_count_more(more, "keys", shown == 0);
  append("}");
  return true;
}

}  // namespace

bool format_log_message(JSContext* ctx, int argc, JSValueConst* argv, const FormatLimits& limits,
                        std::string& out) {
  Formatter formatter(ctx, limits, out);
  return formatter.message(argc, argv);
}

}  // namespace skillbox::bindings
