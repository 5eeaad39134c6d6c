// base/json_text.h — reading and writing JSON text without recursion, for every JSON text skillbox
// takes from a skill, a worker, a database or a file, and every one it writes from such text.
//
// Why not nlohmann's parse()/accept()/dump() directly:
//  - The engine's JSON.stringify escapes a lone UTF-16 surrogate as `\ud800` (ES2019), which RFC 8259's
//    grammar allows and nlohmann's lexer refuses: a skill's result, event, store value or db parameter
//    holding one would be "not JSON" to the host. Here every `\u` escape is accepted; a lone surrogate
//    becomes its 3-byte WTF-8 form (ED A0..BF xx, as QuickJS keeps it) in a parsed string and is written
//    back as the same `\uXXXX` escape, so such text round-trips.
//  - dump(), copies and operator== of nlohmann values recurse once per level of nesting: a value nested
//    100,000 levels deep (a db row, a worker's result) overflows the stack. Here checking and
//    reformatting text builds no tree at all (one bit of state per level), parsing into a tree refuses
//    text nested deeper than a limit, and writing a tree uses an explicit stack.
//
// Use check() to validate text, reformat() to print it, parse() only where a tree is needed (and then
// compare or copy only trees parse() made), write() for trees.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace skillbox::base::json_text {

/// Levels of arrays and objects parse() builds by default (`1` is 0 levels, `[]` one, `[[]]` two).
/// Deep enough for any data a skill means to return; shallow enough that the recursive operations of a
/// tree (comparison, copy) stay far from any thread's stack limit.
inline constexpr size_t kMaxDepth = 512;

/// No limit: for check() and reformat(), which hold one bit per level and never recurse.
inline constexpr size_t kNoDepthLimit = std::numeric_limits<size_t>::max();

/// The top-level value of a JSON text, or why it is not one.
enum class Kind : uint8_t { invalid, too_deep, null, boolean, number, string, array, object };

/// What check() found: `kind` is the top-level value's, or `invalid` / `too_deep`; `depth` is the
/// deepest nesting seen (up to where the scan stopped).
struct Checked {
  Kind kind = Kind::invalid;
  size_t depth = 0;
  [[nodiscard]] bool ok() const { return kind != Kind::invalid && kind != Kind::too_deep; }
};

/// Checks that `text` is exactly one JSON text (RFC 8259; whitespace around it allowed) nested at most
/// `max_depth` levels. Raw string bytes must be well-formed UTF-8 (base/utf8.h) and not C0 controls;
/// every `\uXXXX` escape is accepted, lone surrogates included. O(size) time, O(depth / 8) memory.
[[nodiscard]] Checked check(std::string_view text, size_t max_depth = kNoDepthLimit);

/// The tree of `text`, or a discarded value (is_discarded()) when check(text, max_depth) is not ok.
/// Strings are UTF-8, except that a lone surrogate escape becomes its WTF-8 bytes (see above).
/// Numbers are what nlohmann makes of them (int64, uint64 or double). Duplicate keys: the last wins.
[[nodiscard]] nlohmann::json parse(std::string_view text, size_t max_depth = kMaxDepth);
/// parse() into a tree that keeps object members in the order written.
[[nodiscard]] nlohmann::ordered_json parse_ordered(std::string_view text, size_t max_depth = kMaxDepth);

/// How write() and reformat() lay text out.
struct Layout {
  /// Spaces per level, or -1 for one line with no whitespace at all.
  int indent = -1;
  /// Every character above U+007E as `\uXXXX` (UTF-16 pairs above U+FFFF), as nlohmann's
  /// ensure_ascii does; otherwise UTF-8 is written as it is.
  bool ascii = false;
  /// With `indent` >= 0: an array or object nested this many levels deep or more is written on one
  /// line, compactly, so that the output stays proportional to the input however deep it goes.
  size_t max_indented_depth = kNoDepthLimit;
};

/// JSON text of `value`, without recursion. For values whose strings are well-formed UTF-8 the bytes
/// are those of nlohmann's dump(indent, ' ', ascii, error_handler_t::replace) (as long as
/// max_indented_depth is not reached); a lone surrogate in WTF-8 is written as its `\uXXXX` escape,
/// and any other ill-formed byte as U+FFFD.
[[nodiscard]] std::string write(const nlohmann::json& value, const Layout& layout = {});
[[nodiscard]] std::string write(const nlohmann::ordered_json& value, const Layout& layout = {});

/// write(parse(text)) without the tree, so for any depth: `text` must pass check() (otherwise "" is
/// returned); strings are re-escaped as write() escapes them (a lone surrogate keeps its `\uXXXX`
/// escape, in lower case), each number is spelled as nlohmann spells it (`1.5e-7` becomes `1.5e-07`;
/// one beyond double's range is copied as written), whitespace is dropped or replaced by the layout's.
[[nodiscard]] std::string reformat(std::string_view text, const Layout& layout = {});

/// How nlohmann's parser words the first syntax error of `text`: "line L, column C: syntax error ...",
/// escaped for a terminal (it quotes input bytes). "not valid JSON" when it finds none (text that only
/// base::json_text's own grammar refuses). No document is built: O(1) memory whatever the nesting.
[[nodiscard]] std::string syntax_error_text(std::string_view text);

}  // namespace skillbox::base::json_text
