#include "engine/result.h"

#include "base/utf8.h"
#include "engine/handles.h"

namespace skillbox::engine {
namespace {

// Error text leaves the sandbox (RunResult, terminals, JSON): a lone surrogate in a skill's message
// would make it invalid UTF-8, so it is escaped as \uD800 (base::utf8::escape_invalid).
std::string clip(const char* s, size_t len) {
  if (len <= kMaxErrorTextBytes) return base::utf8::escape_invalid({s, len});
  size_t cut = kMaxErrorTextBytes;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // keep UTF-8 whole
  return base::utf8::escape_invalid({s, cut}) + "...";
}

// Text of `v` by ToString, or nullopt if that threw (the exception is dropped).
std::optional<std::string> to_text(JSContext* ctx, JSValueConst v) {
  CString s(ctx, v);
  if (!s.ok()) {
    JS_FreeValue(ctx, JS_GetException(ctx));
    return std::nullopt;
  }
  return clip(s.data(), s.size());
}

// A string-valued own-or-inherited property; nullopt if absent, not a string, or the getter threw.
std::optional<std::string> string_property(JSContext* ctx, JSValueConst obj, const char* name) {
  Value v(ctx, JS_GetPropertyStr(ctx, obj, name));
  if (v.is_exception()) {
    JS_FreeValue(ctx, JS_GetException(ctx));
    return std::nullopt;
  }
  if (!JS_IsString(v.get())) return std::nullopt;
  return to_text(ctx, v.get());
}

}  // namespace

Result<std::string, ErrorInfo> result_to_json(JSContext* ctx, JSValueConst value) {
  if (JS_IsUndefined(value)) return std::string("null");
  Value json(ctx, JS_JSONStringify(ctx, value, JS_UNDEFINED, JS_UNDEFINED));
  if (json.is_exception()) {
    ErrorInfo e = take_exception(ctx);
    e.message = "the export's result cannot be represented as JSON: " + e.message;
    return e;
  }
  if (!JS_IsString(json.get())) {
    const char* what = JS_IsFunction(ctx, value) ? "a function" : JS_IsSymbol(value) ? "a symbol" : "a value";
    return ErrorInfo{"TypeError",
                     std::string("the export's result is ") + what +
                         ", which JSON cannot represent; return "
                         "plain data (objects, arrays, strings, numbers, booleans, null)",
                     "", ""};
  }
  CString s(ctx, json.get());
  if (!s.ok()) return take_exception(ctx);
  // JSON.stringify escapes lone surrogates (ES2019, engine patch): the text is well-formed UTF-8.
  // Checked anyway, since a result that is not would be mangled by every consumer: refused, not sent.
  if (!base::utf8::is_valid(s.view()))
    return ErrorInfo{"TypeError",
                     "the export's result is not well-formed Unicode text after JSON serialisation; skillbox "
                     "refuses to return it (return strings without unpaired surrogates)",
                     "", ""};
  return std::string(s.data(), s.size());
}

ErrorInfo describe_error(JSContext* ctx, JSValueConst error) {
  ErrorInfo info;
  if (JS_IsObject(error)) {
    info.name = string_property(ctx, error, "name").value_or("Error");
    if (auto m = string_property(ctx, error, "message")) {
      info.message = *m;
    } else if (!JS_IsError(ctx, error)) {
      info.message = to_text(ctx, error).value_or("(an object that cannot be converted to text)");
    }
    info.stack = string_property(ctx, error, "stack").value_or("");
    return info;  // no `code`: only the host knows which errors it made (Session::describe)
  }
  info.name = "Error";
  info.message = to_text(ctx, error).value_or("(a value that cannot be converted to text)");
  return info;
}

ErrorInfo take_exception(JSContext* ctx) {
  Value exc(ctx, JS_GetException(ctx));
  return describe_error(ctx, exc.get());
}

}  // namespace skillbox::engine
