// base/quote.h — the one way an error message shows a string someone else chose (a path, a key, a
// manifest value): in double quotes, bounded, and inert on a terminal.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace skillbox::base {

/// How quote() writes characters that cannot be shown as they are.
enum class QuoteStyle : unsigned char {
  /// C-like, for paths and names: `"` and `\` get a backslash; C0 controls, DEL and bytes that are
  /// not well-formed UTF-8 become `\xNN`; other terminal-unsafe code points (escape.h) `\uXXXX`;
  /// everything else, non-ASCII included, is kept.
  c,
  /// A JSON string in ASCII, for values of JSON documents: `\"`, `\\`, `\b` `\f` `\n` `\r` `\t`, other
  /// C0 controls and every non-ASCII character as `\uXXXX` (UTF-16 surrogate pairs above U+FFFF); an
  /// ill-formed byte becomes `\ufffd`.
  json,
};

/// `text` in double quotes. When `text` is longer than `max_bytes` bytes only its longest prefix of at
/// most `max_bytes` bytes that ends on a character boundary is shown, followed by "..." inside the
/// quotes. The result is at most 6 * max_bytes + 5 bytes (12 * for json), whatever `text` is.
[[nodiscard]] std::string quote(std::string_view text, size_t max_bytes, QuoteStyle style = QuoteStyle::c);

}  // namespace skillbox::base
