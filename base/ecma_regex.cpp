// base/ecma_regex.cpp — ECMAScript patterns translated to RE2 syntax and matched by RE2 (see the header).
#include "base/ecma_regex.h"

#include <re2/re2.h>

#include <cstdint>
#include <cstdio>
#include <optional>

namespace skillbox::base {
namespace {

/// ECMAScript's WhiteSpace and LineTerminator code points (ECMA-262 "\s"), as members of an RE2 class.
constexpr std::string_view kSpaceMembers =
    "\\t\\n\\v\\f\\r "
    "\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}";

/// ECMAScript's "." without the "s" flag: anything but a line terminator.
constexpr std::string_view kDot = "[^\\n\\r\\x{2028}\\x{2029}]";

/// "[]" matches nothing and "[^]" anything in ECMAScript; RE2 reads a "]" right after "[" as a member.
constexpr std::string_view kNothing = "[^\\x00-\\x{10ffff}]";
constexpr std::string_view kAnything = "[\\x00-\\x{10ffff}]";

/// Why patterns cannot use a feature, said once.
constexpr std::string_view kWhyNot =
    " is not supported (patterns are matched by RE2, in time linear in the string's length, which has no "
    "lookaround and no backreferences); rewrite the pattern without it";

std::string hex_escape(uint32_t code_point) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "\\x{%x}", code_point);
  return buf;
}

std::optional<uint32_t> hex_value(std::string_view digits) {
  if (digits.empty() || digits.size() > 6) return std::nullopt;
  uint32_t v = 0;
  for (const char c : digits) {
    v <<= 4;
    if (c >= '0' && c <= '9') {
      v |= static_cast<uint32_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      v |= static_cast<uint32_t>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      v |= static_cast<uint32_t>(c - 'A' + 10);
    } else {
      return std::nullopt;
    }
  }
  return v;
}

/// The scanner's state: the pattern, where it is, and the translation so far.
struct Scanner {
  std::string_view p;
  size_t i = 0;
  bool in_class = false;
  std::string out;

  [[nodiscard]] bool at(std::string_view s) const { return p.substr(i).starts_with(s); }
};

/// "\u" at s.i (the backslash): "\uXXXX", a surrogate pair "\uD83D\uDE00", or "\u{X...}".
Result<uint32_t> unicode_escape(Scanner& s) {
  const auto four = [&](size_t at) {
    return at + 6 <= s.p.size() ? hex_value(s.p.substr(at + 2, 4)) : std::nullopt;
  };
  if (s.i + 2 < s.p.size() && s.p[s.i + 2] == '{') {
    const size_t close = s.p.find('}', s.i + 3);
    const std::optional<uint32_t> v =
        close == std::string_view::npos ? std::nullopt : hex_value(s.p.substr(s.i + 3, close - s.i - 3));
    if (!v || *v > 0x10ffff) return Error{"\"\\u{\" must hold a code point in hex, at most 10FFFF"};
    s.i = close + 1;
    return *v;
  }
  const std::optional<uint32_t> hi = four(s.i);
  if (!hi) return Error{"\"\\u\" must be followed by four hex digits or {code point}"};
  s.i += 6;
  if (*hi < 0xd800 || *hi > 0xdfff) return *hi;
  const std::optional<uint32_t> lo = s.at("\\u") ? four(s.i) : std::nullopt;
  if (*hi > 0xdbff || !lo || *lo < 0xdc00 || *lo > 0xdfff)
    return Error{"a lone UTF-16 surrogate (\"\\u" + std::string(s.p.substr(s.i - 4, 4)) +
                 "\") cannot be matched in UTF-8 text"};
  s.i += 6;
  return 0x10000 + ((*hi - 0xd800) << 10) + (*lo - 0xdc00);
}

/// One escape at s.i (the backslash), appended to s.out in RE2 syntax.
Result<void> escape(Scanner& s) {
  if (s.i + 1 >= s.p.size()) return Error{"the pattern ends with a lone backslash"};
  const char c = s.p[s.i + 1];
  if (c >= '1' && c <= '9')
    return Error{"the backreference \"\\" + std::string(1, c) + "\"" + std::string(kWhyNot)};
  if (c == 'k' && s.i + 2 < s.p.size() && s.p[s.i + 2] == '<')
    return Error{"the named backreference \"\\k<\"" + std::string(kWhyNot)};
  if (c == 'u') {
    Result<uint32_t> cp = unicode_escape(s);
    if (!cp) return cp.error();
    s.out += hex_escape(*cp);
    return {};
  }
  s.i += 2;
  if (c == 'c' && s.i < s.p.size() &&
      ((s.p[s.i] >= 'a' && s.p[s.i] <= 'z') || (s.p[s.i] >= 'A' && s.p[s.i] <= 'Z'))) {
    s.out += hex_escape(static_cast<uint32_t>(s.p[s.i]) % 32);
    ++s.i;
  } else if (c == '0' && !(s.i < s.p.size() && s.p[s.i] >= '0' && s.p[s.i] <= '9')) {
    s.out += "\\x00";
  } else if (c == 'b' && s.in_class) {
    s.out += "\\x08";
  } else if (c == 's') {
    s.out += s.in_class ? std::string(kSpaceMembers) : "[" + std::string(kSpaceMembers) + "]";
  } else if (c == 'S' && !s.in_class) {
    s.out += "[^" + std::string(kSpaceMembers) + "]";
  } else if (c == '/') {
    s.out += '/';
  } else {
    // \d \D \w \W \b \B \S \t \n \v \f \r \xHH \p{..} \P{..} and escaped punctuation mean the same in
    // RE2; anything else RE2 refuses at compile time, and its error names it.
    s.out += '\\';
    s.out += c;
  }
  return {};
}

/// "(" at s.i outside a class: groups RE2 knows, named groups renamed, lookaround refused.
Result<void> group(Scanner& s) {
  if (s.at("(?=") || s.at("(?!"))
    return Error{"the lookahead \"" + std::string(s.p.substr(s.i, 3)) + "\"" + std::string(kWhyNot)};
  if (s.at("(?<=") || s.at("(?<!"))
    return Error{"the lookbehind \"" + std::string(s.p.substr(s.i, 4)) + "\"" + std::string(kWhyNot)};
  if (s.at("(?<")) {
    s.out += "(?P<";
    s.i += 3;
    return {};
  }
  s.out += '(';
  ++s.i;
  return {};
}

}  // namespace

Result<std::string> ecma_to_re2(std::string_view pattern) {
  Scanner s{.p = pattern};
  while (s.i < s.p.size()) {
    const char c = s.p[s.i];
    if (c == '\\') {
      if (Result<void> r = escape(s); !r) return r.error();
    } else if (s.in_class) {
      if (c == ']') s.in_class = false;
      s.out += c == '[' ? "\\[" : std::string(1, c);  // "[[:alpha:]]" is POSIX in RE2, members in ECMAScript
      ++s.i;
    } else if (s.at("[]")) {
      s.out += kNothing;
      s.i += 2;
    } else if (s.at("[^]")) {
      s.out += kAnything;
      s.i += 3;
    } else if (c == '[') {
      s.in_class = true;
      s.out += c;
      ++s.i;
      if (s.at("^")) {
        s.out += '^';
        ++s.i;
      }
    } else if (c == '(') {
      if (Result<void> r = group(s); !r) return r.error();
    } else if (c == '.') {
      s.out += kDot;
      ++s.i;
    } else {
      s.out += c;
      ++s.i;
    }
  }
  return std::move(s.out);
}

Result<EcmaRegex> EcmaRegex::compile(std::string_view pattern) {
  Result<std::string> translated = ecma_to_re2(pattern);
  if (!translated) return translated.error();
  RE2::Options options;
  options.set_log_errors(false);    // the error is returned, not printed on stderr
  options.set_never_capture(true);  // a search needs no groups, and is faster without them
  auto re = std::make_shared<const RE2>(*translated, options);
  if (!re->ok()) return Error{"RE2 cannot compile it: " + re->error()};
  return EcmaRegex(std::move(re), std::move(*translated));
}

bool EcmaRegex::search(std::string_view subject) const {
  return RE2::PartialMatch(re2::StringPiece(subject.data(), subject.size()), *re_);
}

}  // namespace skillbox::base
