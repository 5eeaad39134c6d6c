// capabilities/store/utf8.h — strict UTF-8 validation for store keys.
#pragma once

#include <string_view>

namespace skillbox::store {

/// True when `text` is well-formed UTF-8 (RFC 3629, Unicode 3.9 table 3-7): no overlong forms, no
/// encoded surrogates (QuickJS writes a lone UTF-16 surrogate as ED A0..BF xx), nothing above U+10FFFF,
/// no truncated sequence. NUL is well-formed here; callers that refuse it check separately.
[[nodiscard]] bool valid_utf8(std::string_view text);

}  // namespace skillbox::store
