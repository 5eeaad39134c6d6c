// bindings/args.h — turning hostile JS arguments into plain C++ values, once.
//
// Every host function treats its arguments as hostile (docs/security.md "Hostile arguments"). These
// helpers give each function the same rules, so that a binding reads like its contract:
//
//   static JSValue fs_read_file(JSContext* ctx, JSValueConst, int argc, JSValueConst* argv) {
//     Args args(ctx, "openhuman.fs.readFile", argc, argv);
//     bus::FsReadFileRequest request;
//     Options options;
//     if (!args.string(0, "path", request.path, {.max_bytes = kMaxPathBytes}) ||
//         !args.options(1, "options", options) ||
//         !options.enumeration("encoding", {{"utf8", bus::FsEncoding::utf8},
//                                           {"binary", bus::FsEncoding::binary}}, request.encoding))
//       return JS_EXCEPTION;
//     return bridge(ctx).call_async(ctx, std::move(request), decode_read_file);
//   }
//
// The rules, all decided here:
// - Type checks look at the value's tag or QuickJS class only; they never run JS. No implicit
//   conversion of objects ever happens: no toString, valueOf, Symbol.toPrimitive, no Proxy trap.
//   A string is a string primitive; a Uint8Array is an object whose class is Uint8Array (or a
//   subclass), whatever its prototype says.
// - Each value is converted once into a C++ value; every later check runs on that copy.
// - Failures throw in the skill's realm and name the function and argument:
//   "openhuman.fs.readFile: path must be a string, got object". Wrong type: TypeError. A value of the
//   right type out of range or too long: RangeError. Both are `instanceof Error` in the skill.
// - Strings come out as well-formed UTF-8. A lone surrogate (a JS string is UTF-16 and may hold one)
//   is refused by default; rules can replace it with U+FFFD instead (WebIDL USVString), which is
//   right for text content but not for names, where two different JS strings would become the same
//   path or key. Embedded NULs are kept: capabilities refuse them where they matter.
// - Converting a string allocates its UTF-8 copy on the skill's heap first (QuickJS does the
//   conversion), so huge strings count against the skill's memory limit, not the host's.
// - Options objects are read like WebIDL dictionaries: `undefined` and `null` mean "all defaults";
//   another object is read with [[Get]] one named property at a time, so inherited properties,
//   getters and Proxy traps take part. That runs skill code, which is allowed: it runs under the
//   step limit and deadline like all skill code. Each property is read exactly once (read each key
//   only once from a binding) and type-checked on the value read. If the read throws, the binding
//   throws a TypeError naming the property, with the original exception as `cause`; the uncatchable
//   exception of an interrupted run propagates unchanged.
// - Every helper returns true on success, or false with an exception pending: the caller returns
//   JS_EXCEPTION. On false, `out` is left unchanged. Helpers never leave a JSValue to free.
#pragma once

#include <quickjs.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bindings/owners.h"
#include "bindings/values.h"
#include "bus/messages.h"

namespace skillbox::bindings {

/// What a value is called in error messages: "<function>: <name>[.<key>] must be ...".
struct Where {
  std::string_view function;  // "openhuman.fs.readFile", "TextDecoder"
  std::string_view name;      // "path", "options"
  std::string_view key = {};  // an options property: name "options", key "encoding"
};

inline constexpr size_t kUnlimited = std::numeric_limits<size_t>::max();

enum class LoneSurrogates : uint8_t {
  reject,   // TypeError: "... must be well-formed Unicode (it contains a lone surrogate)"
  replace,  // each lone surrogate becomes U+FFFD (WebIDL USVString)
};

struct StringRules {
  /// Longest accepted UTF-8 length in bytes; longer strings are a RangeError.
  size_t max_bytes = kUnlimited;
  LoneSurrogates lone_surrogates = LoneSurrogates::reject;
  /// Accept the primitives undefined, null, booleans, numbers and BigInts, converted as String(v)
  /// does (no JS runs for primitives), as WebIDL DOMString arguments do (`btoa(42)`). Objects and
  /// symbols are still a TypeError. Off: only string primitives are accepted.
  bool coerce_primitives = false;
};

/// One accepted spelling of an enumeration argument.
template <typename E>
struct EnumChoice {
  std::string_view name;
  E value;
};

/// The UTF-8 bytes of a JS string, borrowed from QuickJS without a further copy (freed on
/// destruction). QuickJS's buffer is never written: when lone surrogates are to be replaced, the
/// bytes are a fixed-up copy of ours instead, charged to the skill's heap in place of the buffer it
/// replaces. Filled by string_bytes(); valid while the object lives. Move-only.
class StringBytes {
 public:
  StringBytes() = default;
  StringBytes(StringBytes&&) noexcept = default;
  StringBytes& operator=(StringBytes&&) noexcept = default;
  StringBytes(const StringBytes&) = delete;
  StringBytes& operator=(const StringBytes&) = delete;
  ~StringBytes() = default;

  [[nodiscard]] std::string_view view() const { return fixed_up_ ? std::string_view(fixed_) : text_.view(); }
  [[nodiscard]] const char* data() const { return view().data(); }
  [[nodiscard]] size_t size() const { return view().size(); }

 private:
  friend bool string_bytes(JSContext*, JSValueConst, const Where&, StringBytes&, const StringRules&);
  CString text_;                      // QuickJS's bytes, when used as they are
  std::string fixed_;                 // else our copy with lone surrogates replaced
  HeapCharge fixed_charge_{nullptr};  // fixed_'s size, held against the skill's heap limit
  bool fixed_up_ = false;
};

/// Bytes of a BufferSource argument, pointing into the skill's ArrayBuffer: valid only until JS runs
/// again (copy them before calling anything that may run skill code).
struct ByteView {
  const uint8_t* data = nullptr;
  size_t size = 0;
};

// ---- single values --------------------------------------------------------------------------------

/// A string argument as UTF-8, checked against `rules`, without copying (see StringBytes).
[[nodiscard]] bool string_bytes(JSContext* ctx, JSValueConst value, const Where& where, StringBytes& out,
                                const StringRules& rules = {});

/// A string argument as a std::string of well-formed UTF-8, checked against `rules`.
[[nodiscard]] bool to_string(JSContext* ctx, JSValueConst value, const Where& where, std::string& out,
                             const StringRules& rules = {});

/// A Uint8Array (or subclass instance) argument, its bytes copied. A view of a detached buffer has no
/// bytes. More than `max_bytes` bytes is a RangeError.
[[nodiscard]] bool to_bytes(JSContext* ctx, JSValueConst value, const Where& where, bus::Bytes& out,
                            size_t max_bytes = kUnlimited);

/// File contents, request bodies: a string (its UTF-8 bytes, lone surrogates replaced with U+FFFD as
/// TextEncoder does) or a Uint8Array (its bytes). More than `max_bytes` bytes is a RangeError.
[[nodiscard]] bool to_string_or_bytes(JSContext* ctx, JSValueConst value, const Where& where, bus::Bytes& out,
                                      size_t max_bytes = kUnlimited);

/// A WebIDL BufferSource: an ArrayBuffer, any TypedArray or a DataView, viewed in place. Detached
/// buffers are empty. TextDecoder.decode uses this.
[[nodiscard]] bool to_buffer_source(JSContext* ctx, JSValueConst value, const Where& where, ByteView& out);

/// A number that is an integer in [min, max]. No conversion: strings, BigInts, objects, NaN and
/// fractions are a TypeError; an integer out of range is a RangeError. -0 reads as 0.
[[nodiscard]] bool to_integer(JSContext* ctx, JSValueConst value, const Where& where, int64_t min,
                              int64_t max, int64_t& out);

/// A boolean primitive (true/false). Anything else, truthy or not, is a TypeError.
[[nodiscard]] bool to_boolean(JSContext* ctx, JSValueConst value, const Where& where, bool& out);

/// A string that is exactly one of `choices` (case-sensitive).
template <typename E>
[[nodiscard]] bool to_enum(JSContext* ctx, JSValueConst value, const Where& where,
                           std::initializer_list<EnumChoice<E>> choices, E& out);

/// A plain record of string values, e.g. HTTP headers `{ "content-type": "text/plain" }`: the
/// object's own enumerable string keys in property order (Object.keys), each value read once with
/// [[Get]] and required to be a string. More than `max_entries` keys is a RangeError (checked before
/// any value is read).
[[nodiscard]] bool to_string_pairs(JSContext* ctx, JSValueConst value, const Where& where,
                                   std::vector<std::pair<std::string, std::string>>& out, size_t max_entries,
                                   const StringRules& key_rules = {}, const StringRules& value_rules = {});

// ---- messages -------------------------------------------------------------------------------------

/// What `value` is, for "got ..." in messages, without running JS: "undefined", "null", "boolean",
/// "number", "bigint", "string", "symbol", "function", "array", "object", or a built-in class name
/// such as "Int8Array", "ArrayBuffer", "DataView".
std::string_view describe(JSContext* ctx, JSValueConst value);

/// Throws "<function>: <name> must be <expected>, got <describe(value)>" as a TypeError.
JSValue throw_wrong_type(JSContext* ctx, const Where& where, std::string_view expected, JSValueConst value);

// ---- options objects ------------------------------------------------------------------------------

/// A WebIDL-dictionary-like options argument (see the rules above). Filled by Args::options() or
/// Options::open(); valid during the host function call that received the object. Each getter
/// leaves `out` unchanged when the property is absent or undefined.
class Options {
 public:
  Options() = default;

  /// Accepts undefined or null (no properties) or any object; other values are a TypeError.
  [[nodiscard]] static bool open(JSContext* ctx, JSValueConst value, const Where& where, Options& out);

  /// Reads `key` with [[Get]] into `out` (undefined when absent).
  [[nodiscard]] bool get(std::string_view key, Value& out) const;

  [[nodiscard]] bool string(std::string_view key, std::string& out, const StringRules& rules = {}) const;
  [[nodiscard]] bool string(std::string_view key, std::optional<std::string>& out,
                            const StringRules& rules = {}) const;
  [[nodiscard]] bool integer(std::string_view key, int64_t min, int64_t max, int64_t& out) const;
  [[nodiscard]] bool integer(std::string_view key, int64_t min, int64_t max,
                             std::optional<int64_t>& out) const;
  /// A boolean primitive, like to_boolean().
  [[nodiscard]] bool boolean(std::string_view key, bool& out) const;
  /// WebIDL `boolean` member: any value, converted with ToBoolean (runs no JS). For web APIs.
  [[nodiscard]] bool truthy(std::string_view key, bool& out) const;
  template <typename E>
  [[nodiscard]] bool enumeration(std::string_view key, std::initializer_list<EnumChoice<E>> choices,
                                 E& out) const;
  [[nodiscard]] bool string_or_bytes(std::string_view key, bus::Bytes& out,
                                     size_t max_bytes = kUnlimited) const;
  [[nodiscard]] bool string_pairs(std::string_view key, std::vector<std::pair<std::string, std::string>>& out,
                                  size_t max_entries, const StringRules& key_rules = {},
                                  const StringRules& value_rules = {}) const;

  /// True if the argument was undefined or null.
  [[nodiscard]] bool empty() const { return !JS_IsObject(object_); }

 private:
  // Reads `key`; `present` is false for absent/undefined (value then undefined).
  [[nodiscard]] bool read(std::string_view key, Value& value, bool& present) const;
  [[nodiscard]] Where where(std::string_view key) const { return {function_, name_, key}; }

  JSContext* ctx_ = nullptr;
  JSValueConst object_ = JS_UNDEFINED;
  std::string_view function_;
  std::string_view name_;
};

// ---- a host function's argument list --------------------------------------------------------------

/// The arguments of one host function call, named by `function` in every error message. Argument
/// indexes past argc read as undefined (so optional arguments need no argc checks).
class Args {
 public:
  Args(JSContext* ctx, std::string_view function, int argc, JSValueConst* argv)
      : ctx_(ctx), function_(function), argc_(argc), argv_(argv) {}

  [[nodiscard]] JSContext* ctx() const { return ctx_; }
  [[nodiscard]] int count() const { return argc_; }
  [[nodiscard]] JSValueConst operator[](int i) const { return i < argc_ ? argv_[i] : JS_UNDEFINED; }
  [[nodiscard]] Where where(std::string_view name) const { return {function_, name}; }
  [[nodiscard]] bool present(int i) const { return !JS_IsUndefined((*this)[i]); }

  /// TypeError "<function>: 2 arguments required, but only 1 present" (WebIDL's check) if argc < n.
  [[nodiscard]] bool require(int n) const;

  [[nodiscard]] bool string(int i, std::string_view name, std::string& out,
                            const StringRules& rules = {}) const {
    return to_string(ctx_, (*this)[i], where(name), out, rules);
  }
  [[nodiscard]] bool bytes(int i, std::string_view name, bus::Bytes& out,
                           size_t max_bytes = kUnlimited) const {
    return to_bytes(ctx_, (*this)[i], where(name), out, max_bytes);
  }
  [[nodiscard]] bool string_or_bytes(int i, std::string_view name, bus::Bytes& out,
                                     size_t max_bytes = kUnlimited) const {
    return to_string_or_bytes(ctx_, (*this)[i], where(name), out, max_bytes);
  }
  [[nodiscard]] bool integer(int i, std::string_view name, int64_t min, int64_t max, int64_t& out) const {
    return to_integer(ctx_, (*this)[i], where(name), min, max, out);
  }
  [[nodiscard]] bool boolean(int i, std::string_view name, bool& out) const {
    return to_boolean(ctx_, (*this)[i], where(name), out);
  }
  template <typename E>
  [[nodiscard]] bool enumeration(int i, std::string_view name, std::initializer_list<EnumChoice<E>> choices,
                                 E& out) const {
    return to_enum(ctx_, (*this)[i], where(name), choices, out);
  }
  [[nodiscard]] bool options(int i, std::string_view name, Options& out) const {
    return Options::open(ctx_, (*this)[i], where(name), out);
  }

 private:
  JSContext* ctx_;
  std::string_view function_;
  int argc_;
  JSValueConst* argv_;
};

// ---- templates ------------------------------------------------------------------------------------

namespace detail {
/// Throws `<where> must be one of "a", "b", got "<value>"` (the value shortened) as a TypeError.
JSValue throw_not_one_of(JSContext* ctx, const Where& where, const std::vector<std::string_view>& names,
                         std::string_view got);
}  // namespace detail

template <typename E>
bool to_enum(JSContext* ctx, JSValueConst value, const Where& where,
             std::initializer_list<EnumChoice<E>> choices, E& out) {
  std::string text;
  if (!to_string(ctx, value, where, text)) return false;
  for (const EnumChoice<E>& choice : choices) {
    if (choice.name == text) {
      out = choice.value;
      return true;
    }
  }
  std::vector<std::string_view> names;
  for (const EnumChoice<E>& choice : choices) names.push_back(choice.name);
  detail::throw_not_one_of(ctx, where, names, text);
  return false;
}

template <typename E>
bool Options::enumeration(std::string_view key, std::initializer_list<EnumChoice<E>> choices, E& out) const {
  Value value;
  bool present = false;
  if (!read(key, value, present)) return false;
  return !present || to_enum(ctx_, value.get(), where(key), choices, out);
}

}  // namespace skillbox::bindings
