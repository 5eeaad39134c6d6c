// base/utf8.h — strict UTF-8 (RFC 3629, Unicode §3.9 table 3-7) and QuickJS's string bytes (WTF-8).
//
// Well-formed here means: no overlong forms, no encoded surrogates U+D800..U+DFFF (QuickJS writes a
// lone UTF-16 surrogate as ED A0..BF xx), nothing above U+10FFFF, no truncated sequence. NUL is
// well-formed; callers that refuse it check separately. Every layer that validates UTF-8 calls this
// file: manifests, store keys, workspace paths, log and terminal escaping.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace skillbox::base::utf8 {

/// U+FFFD REPLACEMENT CHARACTER.
inline constexpr uint32_t kReplacement = 0xFFFD;

/// Length in bytes (1..4) of the well-formed sequence starting at text[i], or 0 when the bytes there
/// are not one. Precondition: i < text.size().
[[nodiscard]] size_t well_formed_length(std::string_view text, size_t i);

/// Like well_formed_length, and stores the decoded code point in `cp` when the result is not 0.
[[nodiscard]] size_t decode(std::string_view text, size_t i, char32_t& cp);

/// Byte offset of the first byte that does not begin a well-formed sequence, or std::nullopt when
/// all of `text` is well-formed.
[[nodiscard]] std::optional<size_t> find_invalid(std::string_view text);

/// True when all of `text` is well-formed UTF-8.
[[nodiscard]] bool is_valid(std::string_view text);

/// The longest prefix of `text` that is at most `max_bytes` long and does not end inside a
/// multi-byte sequence (for well-formed text: a character boundary).
[[nodiscard]] std::string_view prefix(std::string_view text, size_t max_bytes);

/// Appends the UTF-8 encoding of `code_point` (at most U+10FFFF) to `out`.
void append(std::string& out, uint32_t code_point);

/// Length in bytes of a UTF-8 sequence led by `lead`, 1 for a continuation or invalid lead byte.
inline size_t sequence_length(uint8_t lead) {
  if (lead < 0xC0) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

// ---- QuickJS string bytes --------------------------------------------------------------------------
// JS_ToCStringLen hands out UTF-8 in which a lone UTF-16 surrogate is kept as its 3-byte encoding
// ("WTF-8"). The host API either refuses such strings or replaces each lone surrogate with U+FFFD
// (WebIDL USVString), which has the same 3-byte length and can be patched in place.

/// Byte offset of the first lone surrogate in QuickJS string bytes, or npos if there is none.
[[nodiscard]] size_t find_lone_surrogate(std::string_view wtf8);

/// Replaces every lone surrogate of QuickJS string bytes with U+FFFD, in place (same length).
void replace_lone_surrogates(char* data, size_t size);

/// `wtf8` as well-formed UTF-8 for text that leaves the sandbox (error names, messages, stacks): each
/// lone surrogate becomes the six characters `\uD800` (its escape, readable and never confused with
/// the replacement character), any other byte that does not begin a well-formed sequence becomes
/// `\xNN`; everything else is copied. Returns `wtf8` unchanged when it is already well-formed.
[[nodiscard]] std::string escape_invalid(std::string_view wtf8);

/// Reads the code point starting at `pos` of QuickJS string bytes (well-formed UTF-8 or WTF-8: a
/// surrogate comes back as its own value) and advances `pos` past it. Returns the length in UTF-16
/// code units (1 or 2). Precondition: pos < text.size().
unsigned next(std::string_view text, size_t& pos, uint32_t& code_point);

}  // namespace skillbox::base::utf8
