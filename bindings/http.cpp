// bindings/http.cpp — `openhuman.http.{request, get, post}`.
//
// Arguments are hostile (docs/security.md "Hostile arguments"): each is type-checked without running
// JS, converted once into the bus::HttpRequest, and every rule about URLs, methods, headers and sizes is
// then applied by the http capability to that copy. The bounds here only limit what is copied out of the
// skill's heap; the capability's limits are lower and give the error a skill should see.
#include "bindings/http.h"

#include <string>
#include <utility>
#include <vector>

#include "base/utf8.h"
#include "base/utf8_decoder.h"
#include "bindings/args.h"
#include "bindings/bridge.h"
#include "bindings/errors.h"
#include "bindings/function_list.h"
#include "bindings/owners.h"
#include "bindings/values.h"
#include "skillbox/policy.h"

namespace skillbox::bindings {
namespace {

// Copy bounds (see the file comment): the capability refuses URLs above 8 KiB, methods above 32 bytes
// and more than 100 headers with its own messages; bodies are bounded by the manifest ceiling of
// permissions.http.max_request_bytes (256 MiB).
constexpr size_t kMaxUrlCopyBytes = 1u << 20;
constexpr size_t kMaxMethodCopyBytes = 256;
constexpr size_t kMaxHeaderCopyEntries = 1000;
constexpr size_t kMaxBodyCopyBytes = 256u << 20;
constexpr int64_t kMaxTimeoutMs = static_cast<int64_t>(Limits::kMaxTimeoutMs);

// fetch's default for a string body without a Content-Type header.
constexpr const char* kTextContentType = "text/plain;charset=UTF-8";

enum Function : int { kRequest, kGet, kPost, kRequestBlocking, kFetch };
constexpr const char* kFunctionNames[] = {"openhuman.http.request", "openhuman.http.get",
                                          "openhuman.http.post", "net.fetch", "fetch"};

bool has_header(const std::vector<std::pair<std::string, std::string>>& headers, std::string_view lname) {
  for (const auto& [name, value] : headers) {
    if (name.size() != lname.size()) continue;
    bool same = true;
    for (size_t i = 0; i < name.size() && same; ++i) {
      const char c = name[i] >= 'A' && name[i] <= 'Z' ? static_cast<char>(name[i] - 'A' + 'a') : name[i];
      same = c == lname[i];
    }
    if (same) return true;
  }
  return false;
}

// ---- replies ----------------------------------------------------------------------------------------

// `headers`: an own data property per lower-cased name (defined, never [[Set]], so "__proto__" is just
// a name); repeated headers joined with ", " as fetch's Headers.get does.
Value headers_object(JSContext* ctx, const std::vector<std::pair<std::string, std::string>>& headers) {
  std::vector<std::pair<std::string, std::string>> merged;
  for (const auto& [name, value] : headers) {
    auto it = merged.begin();
    while (it != merged.end() && it->first != name) ++it;
    if (it == merged.end()) {
      merged.emplace_back(name, value);
    } else {
      it->second += ", ";
      it->second += value;
    }
  }
  Value obj(ctx, JS_NewObject(ctx));
  if (obj.is_exception()) return obj;
  for (const auto& [name, value] : merged) {
    const Atom atom(ctx, name);
    if (!atom.ok() ||
        JS_DefinePropertyValue(ctx, obj.get(), atom.get(), new_string(ctx, value), JS_PROP_C_W_E) < 0)
      return {ctx, JS_EXCEPTION};
  }
  return obj;
}

// {status, statusText, headers, body, url}; takes `body` (JS_EXCEPTION: making it failed).
JSValue response_object(JSContext* ctx, const bus::HttpResponseReply& r, Value body) {
  if (body.is_exception()) return JS_EXCEPTION;
  Value obj(ctx, JS_NewObject(ctx));
  if (obj.is_exception()) return JS_EXCEPTION;
  Value headers = headers_object(ctx, r.headers);
  if (headers.is_exception()) return JS_EXCEPTION;
  // Each define consumes its value, also on failure; after a failure the rest are freed unused.
  Value values[] = {Value(ctx, JS_NewUint32(ctx, r.status)), Value(ctx, new_string(ctx, r.status_text)),
                    std::move(headers), std::move(body), Value(ctx, new_string(ctx, r.url))};
  const char* names[] = {"status", "statusText", "headers", "body", "url"};
  for (size_t i = 0; i < std::size(values); ++i) {
    if (values[i].is_exception() ||
        JS_DefinePropertyValueStr(ctx, obj.get(), names[i], values[i].release(), JS_PROP_C_W_E) < 0)
      return JS_EXCEPTION;
  }
  return obj.release();
}

JSValue decode_text(JSContext* ctx, bus::Reply& reply) {
  auto& r = std::get<bus::HttpResponseReply>(reply);
  // The WHATWG "UTF-8 decode" of a body, as fetch's text() does it: a leading BOM is dropped,
  // invalid sequences become U+FFFD.
  return response_object(
      ctx, r, Value(ctx, new_string_from_bytes(ctx, r.body.data(), r.body.size(), /*ignore_bom=*/false)));
}

JSValue decode_binary(JSContext* ctx, bus::Reply& reply) {
  auto& r = std::get<bus::HttpResponseReply>(reply);
  return response_object(ctx, r, Value(ctx, new_uint8_array(ctx, r.body.data(), r.body.size())));
}

JSValue decode_json(JSContext* ctx, bus::Reply& reply) {
  auto& r = std::get<bus::HttpResponseReply>(reply);
  // The WHATWG "UTF-8 decode" (BOM dropped, invalid sequences U+FFFD) into a NUL-terminated copy for
  // the parser, charged to the heap first (up to 3 bytes of text per invalid byte).
  const std::string_view raw(reinterpret_cast<const char*>(r.body.data()), r.body.size());
  const bool plain = !raw.starts_with("\xEF\xBB\xBF") && base::utf8::is_valid(raw);
  HeapCharge charge(ctx);
  if (!charge.cover(plain ? raw.size() + 1 : 3 * raw.size() + 16)) return JS_EXCEPTION;
  std::string text;
  try {
    if (plain) {
      text.assign(raw);
    } else {
      base::utf8::Utf8Decoder decoder(/*fatal=*/false, /*ignore_bom=*/false);
      text.reserve(raw.size());
      (void)decoder.decode(r.body.data(), r.body.size(), /*flush=*/true, text);
    }
  } catch (const std::bad_alloc&) {
    return JS_ThrowOutOfMemory(ctx);
  }
  // JS_ParseJSON is the engine's JSON.parse: deep nesting ends in a catchable stack-overflow error.
  Value body(ctx, JS_ParseJSON(ctx, text.c_str(), text.size(), "<http response>"));
  if (body.is_exception()) {
    Value err;
    if (!take_catchable_exception(ctx, &err)) return JS_EXCEPTION;  // an interrupted run stays so
    // Keep the engine's SyntaxError (the skill's realm, `instanceof SyntaxError`) and say where the
    // text came from.
    if (err.is_object()) {
      std::string message = "openhuman.http: the response from " + r.url + " (HTTP " +
                            std::to_string(r.status) + (r.status_text.empty() ? "" : " " + r.status_text) +
                            ") is not valid JSON (responseType 'json')";
      const Value original = property(ctx, err.get(), "message");
      if (original.is_string()) {
        const CString s(ctx, original.get());
        if (s.ok()) {
          message += ": ";
          message.append(s.view());
        }
      }
      if (JS_DefinePropertyValueStr(ctx, err.get(), "message", new_string(ctx, message),
                                    JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE) < 0)
        return JS_EXCEPTION;
    }
    return JS_Throw(ctx, err.release());
  }
  return response_object(ctx, r, std::move(body));
}

// ---- arguments ----------------------------------------------------------------------------------------

struct Parsed {
  bus::HttpRequest request;
  bool string_body = false;
};

// A request body: a string (its UTF-8 bytes) or a Uint8Array; undefined and null mean none.
bool read_body(JSContext* ctx, JSValueConst value, const Where& where, Parsed& out) {
  if (JS_IsUndefined(value) || JS_IsNull(value)) return true;
  out.string_body = JS_IsString(value);
  return to_string_or_bytes(ctx, value, where, out.request.body, kMaxBodyCopyBytes);
}

// The members get/post/request share, read in lexicographic order as WebIDL reads dictionaries.
bool read_common(const Options& o, Parsed& out) {
  std::optional<int64_t> timeout_ms;
  if (!o.string_pairs("headers", out.request.headers, kMaxHeaderCopyEntries)) return false;
  if (!o.enumeration("responseType",
                     {{"text", bus::HttpResponseType::text},
                      {"binary", bus::HttpResponseType::binary},
                      {"json", bus::HttpResponseType::json}},
                     out.request.response_type))
    return false;
  if (!o.integer("timeoutMs", 1, kMaxTimeoutMs, timeout_ms)) return false;
  if (timeout_ms) out.request.timeout_ms = static_cast<uint64_t>(*timeout_ms);
  return true;
}

JSValue send(JSContext* ctx, Parsed& p) {
  if (p.string_body && !has_header(p.request.headers, "content-type"))
    p.request.headers.emplace_back("Content-Type", kTextContentType);
  ReplyDecoder decode = decode_text;
  if (p.request.response_type == bus::HttpResponseType::binary) decode = decode_binary;
  if (p.request.response_type == bus::HttpResponseType::json) decode = decode_json;
  return bridge(ctx).call_async(ctx, std::move(p.request), decode);
}

JSValue http_call(JSContext* ctx, JSValueConst /*this_val*/, int argc, JSValueConst* argv, int magic);

}  // namespace

JSValue http_request_blocking(JSContext* ctx, JSValueConst this_val, int argc, JSValueConst* argv) {
  return http_call(ctx, this_val, argc, argv, kRequestBlocking);
}

JSValue http_request_for_fetch(JSContext* ctx, JSValueConst this_val, int argc, JSValueConst* argv) {
  return http_call(ctx, this_val, argc, argv, kFetch);
}

namespace {

JSValue http_call(JSContext* ctx, JSValueConst /*this_val*/, int argc, JSValueConst* argv, int magic) {
  const char* name = kFunctionNames[magic];
  Args args(ctx, name, argc, argv);
  Parsed p;
  const StringRules url_rules{.max_bytes = kMaxUrlCopyBytes};
  Options options;
  switch (magic) {
    case kGet:
      if (!args.require(1) || !args.string(0, "url", p.request.url, url_rules) ||
          !args.options(1, "options", options) || !read_common(options, p))
        return JS_EXCEPTION;
      p.request.method = "GET";
      break;
    case kPost:
      if (!args.require(1) || !args.string(0, "url", p.request.url, url_rules) ||
          !read_body(ctx, args[1], args.where("body"), p) || !args.options(2, "options", options) ||
          !read_common(options, p))
        return JS_EXCEPTION;
      p.request.method = "POST";
      break;
    default: {  // request({body, headers, method, responseType, timeoutMs, url})
      if (!args.require(1)) return JS_EXCEPTION;
      if (!JS_IsObject(args[0])) return throw_wrong_type(ctx, args.where("options"), "an object", args[0]);
      if (!args.options(0, "options", options)) return JS_EXCEPTION;
      Value body;
      if (!options.get("body", body)) return JS_EXCEPTION;
      const bool body_ok = read_body(ctx, body.get(), {name, "options", "body"}, p);
      body.reset();
      if (!body_ok || !read_common(options, p)) return JS_EXCEPTION;
      std::optional<std::string> method;
      std::optional<std::string> url;
      if (!options.string("method", method, {.max_bytes = kMaxMethodCopyBytes}) ||
          !options.string("url", url, url_rules))
        return JS_EXCEPTION;
      if (!url) return throw_type_error(ctx, std::string(name) + ": options.url is required");
      p.request.method = method.value_or("GET");
      p.request.url = std::move(*url);
      break;
    }
  }
  if (magic == kRequestBlocking) {
    if (p.string_body && !has_header(p.request.headers, "content-type"))
      p.request.headers.emplace_back("Content-Type", kTextContentType);
    bus::Reply reply = bridge(ctx).call_blocking(std::move(p.request));
    if (const auto* e = std::get_if<bus::ErrorReply>(&reply)) return throw_host_error(ctx, *e);
    if (!std::holds_alternative<bus::HttpResponseReply>(reply))
      return JS_ThrowInternalError(ctx, "net.fetch: the host returned an unexpected reply");
    return decode_text(ctx, reply);
  }
  return send(ctx, p);
}

// Static storage: QuickJS keeps pointers to these entries until each property is first read.
const JSCFunctionListEntry kHttpFunctions[] = {
    list_function_magic("request", 1, http_call, kRequest),
    list_function_magic("get", 1, http_call, kGet),
    list_function_magic("post", 2, http_call, kPost),
};

}  // namespace

bool install_http(JSContext* ctx, JSValueConst openhuman) {
  // Created on first access (list_object).
  static const JSCFunctionListEntry kHttpObject[] = {
      list_object("http", kHttpFunctions, static_cast<int>(std::size(kHttpFunctions))),
  };
  JS_SetPropertyFunctionList(ctx, openhuman, kHttpObject, 1);
  return true;
}

}  // namespace skillbox::bindings
