// capabilities/http/address_check.cpp — special-purpose IPv4/IPv6 ranges refused at connect time.
#include "capabilities/http/address_check.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>
#include <string>

namespace skillbox::capabilities::http {
namespace {

struct Ipv4Range {
  uint32_t base;
  unsigned prefix;
  std::string_view why;
};

constexpr uint32_t v4(unsigned a, unsigned b, unsigned c, unsigned d) {
  return (a << 24) | (b << 16) | (c << 8) | d;
}

// IANA IPv4 Special-Purpose Address Registry, plus multicast and the reserved class E space. Ranges
// the registry marks globally reachable (AS112, AMT) are left out: they are ordinary internet hosts.
constexpr Ipv4Range kIpv4Ranges[] = {
    {v4(0, 0, 0, 0), 8, "an unspecified (0.0.0.0/8) address"},
    {v4(10, 0, 0, 0), 8, "a private (RFC 1918) address"},
    {v4(100, 64, 0, 0), 10, "a carrier-grade NAT (100.64.0.0/10) address"},
    {v4(127, 0, 0, 0), 8, "a loopback address"},
    {v4(169, 254, 0, 0), 16, "a link-local address"},
    {v4(172, 16, 0, 0), 12, "a private (RFC 1918) address"},
    {v4(192, 0, 0, 0), 24, "a reserved (IETF protocol assignment) address"},
    {v4(192, 0, 2, 0), 24, "a documentation (TEST-NET) address"},
    {v4(192, 88, 99, 0), 24, "a reserved (6to4 relay anycast) address"},
    {v4(192, 168, 0, 0), 16, "a private (RFC 1918) address"},
    {v4(198, 18, 0, 0), 15, "a benchmarking (198.18.0.0/15) address"},
    {v4(198, 51, 100, 0), 24, "a documentation (TEST-NET) address"},
    {v4(203, 0, 113, 0), 24, "a documentation (TEST-NET) address"},
    {v4(224, 0, 0, 0), 4, "a multicast address"},
    {v4(240, 0, 0, 0), 4, "a reserved (240.0.0.0/4 or broadcast) address"},
};

bool in_v4(uint32_t address, uint32_t base, unsigned prefix) {
  const uint32_t mask = prefix == 0 ? 0 : ~uint32_t{0} << (32 - prefix);
  return (address & mask) == (base & mask);
}

uint32_t embedded_v4(const std::array<uint8_t, 16>& a, size_t at) {
  return (uint32_t{a[at]} << 24) | (uint32_t{a[at + 1]} << 16) | (uint32_t{a[at + 2]} << 8) |
         uint32_t{a[at + 3]};
}

bool all_zero(const std::array<uint8_t, 16>& a, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i)
    if (a[i] != 0) return false;
  return true;
}

}  // namespace

std::optional<std::string_view> classify_ipv4(uint32_t address) {
  for (const Ipv4Range& r : kIpv4Ranges)
    if (in_v4(address, r.base, r.prefix)) return r.why;
  return std::nullopt;
}

std::optional<std::string_view> classify_ipv6(const std::array<uint8_t, 16>& a) {
  // ::/96 holds ::, ::1 and the deprecated IPv4-compatible addresses; ::ffff:0:0/96 the mapped ones.
  if (all_zero(a, 0, 10)) {
    if (a[10] == 0xff && a[11] == 0xff) return "an IPv4-mapped IPv6 address";
    if (a[10] == 0 && a[11] == 0) {
      if (all_zero(a, 12, 15) && a[15] == 0) return "an unspecified address";
      if (all_zero(a, 12, 15) && a[15] == 1) return "a loopback address";
      return "an IPv4-compatible IPv6 address";
    }
  }
  // NAT64 well-known prefix 64:ff9b::/96 (RFC 6052): the IPv4 host it translates to decides. DNS64
  // networks hand these out for every IPv4-only host on the internet, so refusing them all would
  // break IPv6-only machines.
  if (a[0] == 0x00 && a[1] == 0x64 && a[2] == 0xff && a[3] == 0x9b && all_zero(a, 4, 12))
    return classify_ipv4(embedded_v4(a, 12));
  if (a[0] == 0x00 && a[1] == 0x64 && a[2] == 0xff && a[3] == 0x9b && a[4] == 0x00 && a[5] == 0x01)
    return "a local-use NAT64 (64:ff9b:1::/48) address";
  if (a[0] == 0xff) return "a multicast address";
  if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80) return "a link-local address";
  if (a[0] == 0xfe && (a[1] & 0xc0) == 0xc0) return "a site-local address";
  if ((a[0] & 0xfe) == 0xfc) return "a unique-local address";
  // Deny by default: only 2000::/3 is allocated for global unicast.
  if ((a[0] & 0xe0) != 0x20) return "a reserved IPv6 address";
  if (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x0d && a[3] == 0xb8) return "a documentation address";
  // 2001::/23 is IETF protocol assignments, among them Teredo (2001::/32) whose tunnels embed
  // arbitrary IPv4 endpoints.
  if (a[0] == 0x20 && a[1] == 0x01 && (a[2] & 0xfe) == 0x00)
    return "a reserved (IETF protocol assignment) address";
  // 6to4 (RFC 3056): 2002:AABB:CCDD::/48 is routed to IPv4 host AA.BB.CC.DD.
  if (a[0] == 0x20 && a[1] == 0x02) {
    if (auto why = classify_ipv4(embedded_v4(a, 2))) return why;
    return std::nullopt;
  }
  if (a[0] == 0x3f && a[1] == 0xff && (a[2] & 0xf0) == 0x00) return "a documentation address";
  return std::nullopt;
}

std::optional<std::string_view> classify_sockaddr(const sockaddr* address, socklen_t length) {
  if (address == nullptr) return "a non-IP address";
  if (address->sa_family == AF_INET && length >= static_cast<socklen_t>(sizeof(sockaddr_in))) {
    sockaddr_in in{};
    std::memcpy(&in, address, sizeof in);
    return classify_ipv4(ntohl(in.sin_addr.s_addr));
  }
  if (address->sa_family == AF_INET6 && length >= static_cast<socklen_t>(sizeof(sockaddr_in6))) {
    sockaddr_in6 in6{};
    std::memcpy(&in6, address, sizeof in6);
    std::array<uint8_t, 16> bytes{};
    std::memcpy(bytes.data(), &in6.sin6_addr, bytes.size());
    return classify_ipv6(bytes);
  }
  return "a non-IP address";
}

std::optional<std::string_view> classify_ip_text(std::string_view text) {
  if (text.empty() || text.size() > 63) return "an unparseable address";
  const std::string copy(text);  // inet_pton needs a terminated string
  in_addr in{};
  if (inet_pton(AF_INET, copy.c_str(), &in) == 1) return classify_ipv4(ntohl(in.s_addr));
  in6_addr in6{};
  if (inet_pton(AF_INET6, copy.c_str(), &in6) == 1) {
    std::array<uint8_t, 16> bytes{};
    std::memcpy(bytes.data(), &in6, bytes.size());
    return classify_ipv6(bytes);
  }
  return "an unparseable address";
}

}  // namespace skillbox::capabilities::http
