// policy/http_allow.h — the syntax of one `permissions.http.allow` entry.
//
// An entry is `scheme://host[:port]/path-prefix` (docs/manifest.md). This file only checks and
// normalizes the entry as written in the manifest; matching request URLs against entries is the http
// capability's job. Entries are deliberately narrower than URLs: no userinfo, query or fragment, ASCII
// only, IPv4 only in dotted-decimal form, so that an entry means one thing to every reader (parser
// confusion between URL libraries is the classic allowlist bypass).
#pragma once

#include <string>
#include <string_view>

#include "skillbox/skillbox.h"

namespace skillbox::policy {

/// Returns the normalized entry: lower-case scheme and host, the port omitted when it is the scheme's
/// default, percent-escapes in upper case, and a path of at least "/". For example
/// "HTTPS://API.Example.com:443" -> "https://api.example.com/". On failure the Error's message says
/// what is wrong in a few words, without naming the entry or the key ("the scheme must be http or
/// https").
[[nodiscard]] Result<std::string> normalize_http_allow_entry(std::string_view entry);

}  // namespace skillbox::policy
