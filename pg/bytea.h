// pg/bytea.h — bytes as PostgreSQL's bytea values, in the hex text format ("\x0a1b..."), both ways.
//
// Statements carry bytes as text parameters cast to bytea ($3::bytea) and read them back as text, so
// that no value ever needs libpq's binary format. Reading never trusts storage: anything that is not
// bytea's hex output is refused.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace skillbox::pg {

/// `bytes` as bytea's hex input: "\x" and two hex digits a byte.
[[nodiscard]] std::string to_bytea(std::string_view bytes);

/// bytea's hex output ("\x...") as bytes; std::nullopt for NULL and for anything that is not that.
[[nodiscard]] std::optional<std::string> from_bytea(const std::optional<std::string>& text);

}  // namespace skillbox::pg
