// capabilities/http/address_check.h — which IP addresses a skill may connect to.
//
// The connect-time half of skillbox's SSRF defence (docs/http.md "Addresses"): every socket libcurl
// opens for a skill goes through HttpCapability's open-socket callback, which hands the address it is
// about to connect to to classify_sockaddr(). Anything that is not a globally reachable unicast address
// is refused unless the policy sets `allow_private_addresses`. Checking the address actually connected
// to (not the host name, not a literal in the URL) is what defeats alternate IP spellings
// (`http://2130706433/`, `http://0x7f000001/`), DNS names that resolve to internal addresses and DNS
// rebinding.
//
// Sources: IANA IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890 and its updates), RFC 1918
// (private), RFC 6598 (carrier-grade NAT), RFC 3927 / RFC 4291 (link-local), RFC 4193 (unique-local),
// RFC 4291 §2.5.5.2 (IPv4-mapped), RFC 3056 (6to4), RFC 6052 (NAT64), RFC 4380 (Teredo).
#pragma once

#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace skillbox::capabilities::http {

/// Returns why a skill may not connect to `address` without `allow_private_addresses` — a short
/// noun phrase for error messages such as "a loopback address" — or std::nullopt for a globally
/// reachable unicast address. `address` is an IPv4 address in host byte order.
[[nodiscard]] std::optional<std::string_view> classify_ipv4(uint32_t address);

/// Same for IPv6 (16 bytes, network order). IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible
/// addresses are always refused: a socket given one reaches IPv4 space the IPv4 rules never saw.
/// 6to4 (2002::/16) and NAT64 (64:ff9b::/96) addresses are judged by the IPv4 address they embed.
/// Everything outside 2000::/3 (global unicast) is refused, so new special ranges default to closed.
[[nodiscard]] std::optional<std::string_view> classify_ipv6(const std::array<uint8_t, 16>& address);

/// Classifies a socket address as passed to connect(). Families other than AF_INET/AF_INET6 and
/// truncated addresses are refused ("a non-IP address").
[[nodiscard]] std::optional<std::string_view> classify_sockaddr(const sockaddr* address, socklen_t length);

/// Classifies a numeric address in text form ("127.0.0.1", "::1"), as libcurl reports the primary IP
/// of a connection. Text that is not a numeric address is refused ("an unparseable address").
[[nodiscard]] std::optional<std::string_view> classify_ip_text(std::string_view text);

}  // namespace skillbox::capabilities::http
