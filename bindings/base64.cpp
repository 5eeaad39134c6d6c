// bindings/base64.cpp — `atob` and `btoa` (HTML Standard §8.3).
#include "bindings/base64.h"

#include <iterator>
#include <new>

#include "base/utf8.h"
#include "bindings/args.h"
#include "bindings/errors.h"
#include "bindings/function_list.h"
#include "bindings/values.h"

namespace skillbox::bindings {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

bool is_ascii_whitespace(char c) {
  return c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == ' ';
}

constexpr StringRules kDomString = {.lone_surrogates = LoneSurrogates::replace, .coerce_primitives = true};

JSValue js_btoa(JSContext* ctx, JSValueConst /*this_val*/, int argc, JSValueConst* argv) {
  const Args args(ctx, "btoa", argc, argv);
  StringBytes data;
  if (!args.require(1) || !string_bytes(ctx, args[0], args.where("data"), data, kDomString))
    return JS_EXCEPTION;
  // The bytes (at most one per UTF-8 byte) and their base64 text.
  HeapCharge charge(ctx);
  if (!charge.cover(data.size() + (data.size() + 2) / 3 * 4)) return JS_EXCEPTION;
  try {
    // Each code point must fit a byte; the string's UTF-8 is decoded back to those bytes.
    std::string bytes;
    bytes.reserve(data.size());
    const std::string_view text = data.view();
    for (size_t pos = 0; pos < text.size();) {
      uint32_t cp = 0;
      base::utf8::next(text, pos, cp);
      if (cp > 0xFF)
        return throw_dom_exception(ctx, "InvalidCharacterError", kInvalidCharacterErrorCode,
                                   "btoa: the string contains a character outside of Latin-1 (above U+00FF)");
      bytes.push_back(static_cast<char>(cp));
    }
    return new_string(ctx, base64_encode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  } catch (const std::bad_alloc&) {
    return JS_ThrowOutOfMemory(ctx);
  }
}

JSValue js_atob(JSContext* ctx, JSValueConst /*this_val*/, int argc, JSValueConst* argv) {
  const Args args(ctx, "atob", argc, argv);
  StringBytes data;
  if (!args.require(1) || !string_bytes(ctx, args[0], args.where("data"), data, kDomString))
    return JS_EXCEPTION;
  // The text without whitespace, the decoded bytes (3 per 4 characters) and their UTF-8 (2 per byte).
  HeapCharge charge(ctx);
  if (!charge.cover(data.size() + 3 * (data.size() / 4 * 3 + 2))) return JS_EXCEPTION;
  try {
    const std::optional<std::string> bytes = forgiving_base64_decode(data.view());
    if (!bytes)
      return throw_dom_exception(ctx, "InvalidCharacterError", kInvalidCharacterErrorCode,
                                 "atob: the string is not correctly encoded base64");
    // A binary string: byte b becomes code unit b, i.e. Latin-1, which JS_NewStringLen reads as UTF-8.
    std::string text;
    text.reserve(bytes->size() * 2);
    for (char b : *bytes) base::utf8::append(text, static_cast<uint8_t>(b));
    return new_string(ctx, text);
  } catch (const std::bad_alloc&) {
    return JS_ThrowOutOfMemory(ctx);
  }
}

const JSCFunctionListEntry kFunctions[] = {
    list_function("atob", 1, js_atob),
    list_function("btoa", 1, js_btoa),
};

}  // namespace

std::string base64_encode(const uint8_t* data, size_t size) {
  std::string out;
  out.reserve((size + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= size; i += 3) {
    const uint32_t n = (uint32_t{data[i]} << 16) | (uint32_t{data[i + 1]} << 8) | data[i + 2];
    out += kAlphabet[n >> 18];
    out += kAlphabet[(n >> 12) & 0x3F];
    out += kAlphabet[(n >> 6) & 0x3F];
    out += kAlphabet[n & 0x3F];
  }
  if (size - i == 1) {
    const uint32_t n = uint32_t{data[i]} << 16;
    out += kAlphabet[n >> 18];
    out += kAlphabet[(n >> 12) & 0x3F];
    out += "==";
  } else if (size - i == 2) {
    const uint32_t n = (uint32_t{data[i]} << 16) | (uint32_t{data[i + 1]} << 8);
    out += kAlphabet[n >> 18];
    out += kAlphabet[(n >> 12) & 0x3F];
    out += kAlphabet[(n >> 6) & 0x3F];
    out += '=';
  }
  return out;
}

int base64_sextet(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

std::optional<std::string> forgiving_base64_decode(std::string_view text) {
  // Infra §4.7 step 1: remove ASCII whitespace.
  std::string data;
  data.reserve(text.size());
  for (char c : text)
    if (!is_ascii_whitespace(c)) data.push_back(c);
  // Step 2: with a length of 4n, drop one or two trailing '='.
  if (data.size() % 4 == 0 && !data.empty() && data.back() == '=') {
    data.pop_back();
    if (!data.empty() && data.back() == '=') data.pop_back();
  }
  // Step 3: 4n+1 characters cannot encode whole bytes.
  if (data.size() % 4 == 1) return std::nullopt;
  // Steps 4-8: every remaining character must be in the alphabet; 6 bits each.
  std::string out;
  out.reserve(data.size() / 4 * 3 + 2);
  uint32_t buffer = 0;
  int bits = 0;
  for (char c : data) {
    const int v = base64_sextet(c);
    if (v < 0) return std::nullopt;
    buffer = (buffer << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits == 24) {
      out += static_cast<char>((buffer >> 16) & 0xFF);
      out += static_cast<char>((buffer >> 8) & 0xFF);
      out += static_cast<char>(buffer & 0xFF);
      buffer = 0;
      bits = 0;
    }
  }
  // Step 9: leftover bits; the low bits past the last whole byte are discarded.
  if (bits == 12) {
    out += static_cast<char>((buffer >> 4) & 0xFF);
  } else if (bits == 18) {
    out += static_cast<char>((buffer >> 10) & 0xFF);
    out += static_cast<char>((buffer >> 2) & 0xFF);
  }
  return out;
}

void install_base64(JSContext* ctx, JSValueConst global) {
  JS_SetPropertyFunctionList(ctx, global, kFunctions, static_cast<int>(std::size(kFunctions)));
}

}  // namespace skillbox::bindings
