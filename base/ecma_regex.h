// base/ecma_regex.h — a JSON Schema "pattern" (an ECMA-262 regular expression, JSON Schema draft 7
// section 4.3 "Regular Expressions") compiled for RE2, so that matching takes time linear in the
// subject's length whatever the pattern: no backtracking (ReDoS such as "^(a+)+$" on "aaa...!") and no
// recursion per character (libstdc++'s std::regex overflowed an 8 MiB stack on 16 KiB of input).
//
// ECMAScript syntax RE2 does not share is translated: "\uXXXX" and "\u{X}" (a surrogate pair
// becomes one code point), "(?<name>" named groups, "\cX", "\0", "[\b]", the empty class "[]" and "[^]",
// "." (which excludes \r, U+2028 and U+2029 as in ECMAScript) and "\s"/"\S" outside a class (ECMAScript's
// Unicode white space). What RE2 cannot do at all is an error naming the feature: backreferences ("\1",
// "\k<name>") and lookaround ("(?=", "(?!", "(?<=", "(?<!"). Subjects and patterns are UTF-8; matching
// is by code point (ECMAScript's "u" flag), unanchored unless the pattern anchors itself.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "skillbox/result.h"

namespace re2 {
class RE2;
}

namespace skillbox::base {

/// One compiled pattern. Immutable; matches() is thread-safe (RE2 is).
class EcmaRegex {
 public:
  /// Translates and compiles `pattern`. The error says what is not supported or what RE2 objects to,
  /// e.g. "lookahead \"(?=\" is not supported (patterns are matched by RE2, in linear time, without
  /// lookaround or backreferences)".
  static Result<EcmaRegex> compile(std::string_view pattern);

  /// True when the pattern matches somewhere in `subject` (ECMAScript's RegExp.prototype.test).
  [[nodiscard]] bool search(std::string_view subject) const;

  /// The RE2 syntax the pattern became (for tests and error reports).
  [[nodiscard]] const std::string& translated() const { return translated_; }

 private:
  EcmaRegex(std::shared_ptr<const re2::RE2> re, std::string translated)
      : re_(std::move(re)), translated_(std::move(translated)) {}
  std::shared_ptr<const re2::RE2> re_;
  std::string translated_;
};

/// The RE2 syntax of an ECMAScript pattern, or why it has none (see the header comment). Exposed for tests.
Result<std::string> ecma_to_re2(std::string_view pattern);

}  // namespace skillbox::base
