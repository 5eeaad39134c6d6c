// policy/utf8.h — strict UTF-8 checking for manifest text (RFC 3629).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace skillbox::policy {

/// Returns the byte offset of the first byte that is not part of well-formed UTF-8 (RFC 3629 §4:
/// no overlong forms, no surrogates U+D800..U+DFFF, nothing above U+10FFFF), or std::nullopt when all
/// of `text` is well-formed.
[[nodiscard]] std::optional<size_t> find_invalid_utf8(std::string_view text);

/// Returns the longest prefix of well-formed UTF-8 `text` that is at most `max_bytes` long and does
/// not end inside a multi-byte sequence.
[[nodiscard]] std::string_view utf8_prefix(std::string_view text, size_t max_bytes);

/// Decodes the code point starting at `text[i]` of well-formed UTF-8 and advances `i` past it.
[[nodiscard]] char32_t next_code_point(std::string_view text, size_t& i);

}  // namespace skillbox::policy
