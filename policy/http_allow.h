// policy/http_allow.h — the one parser of `permissions.http.allow` entries.
//
// An entry is `scheme://host[:port]/path-prefix` (docs/manifest.md). This file checks an entry as
// written and turns it into the HttpAllowEntry (skillbox/policy.h) that the http capability matches
// request URLs against; nothing else parses entry text. Entries are deliberately narrower than URLs:
// no userinfo, query or fragment, ASCII only, IPv4 only in dotted-decimal form, so that an entry means
// one thing to every reader (parser confusion between URL libraries is the classic allowlist bypass).
#pragma once

#include <string>
#include <string_view>

#include "skillbox/skillbox.h"

namespace skillbox::policy {

/// Parses and normalizes one entry: lower-case scheme and host, the port filled in (and left out of
/// `text` when it is the scheme's default), percent-escapes in upper case, and a path of at least "/".
/// For example "HTTPS://API.Example.com:443" -> text "https://api.example.com/", port 443, path "/".
/// On failure the Error's message says what is wrong in a few words, without naming the entry or the
/// key ("the scheme must be http or https"). Linear in the entry's length; at most
/// kMaxHttpAllowEntryBytes (policy/ceilings.h) are looked at.
[[nodiscard]] Result<HttpAllowEntry> parse_http_allow_entry(std::string_view entry);

/// parse_http_allow_entry(entry)'s `text`.
[[nodiscard]] Result<std::string> normalize_http_allow_entry(std::string_view entry);

/// True when a lower-cased host (without brackets) would be read as an IPv4 address by a WHATWG URL
/// parser or by inet_aton: its last label, a trailing '.' ignored, is all digits or 0x and hex
/// digits ("127.1", "0x7f.1", "1.2.3.010", "2130706433").
[[nodiscard]] bool host_reads_as_ipv4(std::string_view host);
/// True for an IPv4 address written as four decimal numbers 0-255 without leading zeros.
[[nodiscard]] bool is_canonical_ipv4(std::string_view host);

}  // namespace skillbox::policy
