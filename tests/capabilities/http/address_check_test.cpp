#include "capabilities/http/address_check.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <cstring>
#include <string>

namespace skillbox::capabilities::http {
namespace {

std::string why(std::string_view ip) {
  auto r = classify_ip_text(ip);
  return r ? std::string(*r) : std::string("public");
}

TEST(AddressCheck, RefusesEveryNonPublicIpv4Range) {
  EXPECT_EQ(why("127.0.0.1"), "a loopback address");
  EXPECT_EQ(why("127.255.255.254"), "a loopback address");
  EXPECT_EQ(why("0.0.0.0"), "an unspecified (0.0.0.0/8) address");
  EXPECT_EQ(why("0.1.2.3"), "an unspecified (0.0.0.0/8) address");
  EXPECT_EQ(why("10.0.0.1"), "a private (RFC 1918) address");
  EXPECT_EQ(why("172.16.0.1"), "a private (RFC 1918) address");
  EXPECT_EQ(why("172.31.255.255"), "a private (RFC 1918) address");
  EXPECT_EQ(why("192.168.1.1"), "a private (RFC 1918) address");
  EXPECT_EQ(why("169.254.169.254"), "a link-local address");
  EXPECT_EQ(why("100.64.0.1"), "a carrier-grade NAT (100.64.0.0/10) address");
  EXPECT_EQ(why("100.127.255.255"), "a carrier-grade NAT (100.64.0.0/10) address");
  EXPECT_EQ(why("224.0.0.1"), "a multicast address");
  EXPECT_EQ(why("239.255.255.250"), "a multicast address");
  EXPECT_EQ(why("255.255.255.255"), "a reserved (240.0.0.0/4 or broadcast) address");
  EXPECT_EQ(why("240.0.0.1"), "a reserved (240.0.0.0/4 or broadcast) address");
  EXPECT_EQ(why("192.0.2.10"), "a documentation (TEST-NET) address");
  EXPECT_EQ(why("198.51.100.1"), "a documentation (TEST-NET) address");
  EXPECT_EQ(why("203.0.113.7"), "a documentation (TEST-NET) address");
  EXPECT_EQ(why("198.18.0.1"), "a benchmarking (198.18.0.0/15) address");
  EXPECT_EQ(why("192.0.0.8"), "a reserved (IETF protocol assignment) address");
  EXPECT_EQ(why("192.88.99.1"), "a reserved (6to4 relay anycast) address");
}

TEST(AddressCheck, AcceptsPublicIpv4IncludingRangeNeighbours) {
  EXPECT_EQ(why("8.8.8.8"), "public");
  EXPECT_EQ(why("1.1.1.1"), "public");
  EXPECT_EQ(why("172.15.255.255"), "public");  // just below 172.16/12
  EXPECT_EQ(why("172.32.0.0"), "public");      // just above
  EXPECT_EQ(why("100.63.255.255"), "public");  // just below CGNAT
  EXPECT_EQ(why("100.128.0.0"), "public");
  EXPECT_EQ(why("169.253.255.255"), "public");
  EXPECT_EQ(why("126.255.255.255"), "public");
  EXPECT_EQ(why("128.0.0.0"), "public");
  EXPECT_EQ(why("223.255.255.255"), "public");  // last before multicast
}

TEST(AddressCheck, RefusesNonPublicIpv6AndEmbeddedIpv4) {
  EXPECT_EQ(why("::"), "an unspecified address");
  EXPECT_EQ(why("::1"), "a loopback address");
  EXPECT_EQ(why("::ffff:127.0.0.1"), "an IPv4-mapped IPv6 address");
  EXPECT_EQ(why("::ffff:8.8.8.8"), "an IPv4-mapped IPv6 address");  // mapped is refused whatever it maps
  EXPECT_EQ(why("::127.0.0.1"), "an IPv4-compatible IPv6 address");
  EXPECT_EQ(why("fe80::1"), "a link-local address");
  EXPECT_EQ(why("febf::1"), "a link-local address");
  EXPECT_EQ(why("fec0::1"), "a site-local address");
  EXPECT_EQ(why("fc00::1"), "a unique-local address");
  EXPECT_EQ(why("fd12:3456::1"), "a unique-local address");
  EXPECT_EQ(why("ff02::1"), "a multicast address");
  EXPECT_EQ(why("2001:db8::1"), "a documentation address");
  EXPECT_EQ(why("3fff::1"), "a documentation address");
  EXPECT_EQ(why("2001:0:4136:e378:8000:63bf:3fff:fdd2"),
            "a reserved (IETF protocol assignment) address");  // Teredo
  EXPECT_EQ(why("100::1"), "a reserved IPv6 address");
  EXPECT_EQ(why("5f00::1"), "a reserved IPv6 address");
  // 6to4 and NAT64 are judged by the IPv4 address inside.
  EXPECT_EQ(why("2002:7f00:1::"), "a loopback address");
  EXPECT_EQ(why("2002:a9fe:a9fe::1"), "a link-local address");
  EXPECT_EQ(why("64:ff9b::127.0.0.1"), "a loopback address");
  EXPECT_EQ(why("64:ff9b::10.1.2.3"), "a private (RFC 1918) address");
  EXPECT_EQ(why("64:ff9b:1::8.8.8.8"), "a local-use NAT64 (64:ff9b:1::/48) address");
}

TEST(AddressCheck, AcceptsGlobalUnicastIpv6) {
  EXPECT_EQ(why("2606:4700:4700::1111"), "public");
  EXPECT_EQ(why("2a00:1450:4001:80b::200e"), "public");
  EXPECT_EQ(why("2001:200::1"), "public");       // first block after 2001::/23
  EXPECT_EQ(why("2002:808:808::1"), "public");   // 6to4 of 8.8.8.8
  EXPECT_EQ(why("64:ff9b::8.8.8.8"), "public");  // NAT64 of a public host
}

TEST(AddressCheck, RefusesTextThatIsNotAnAddress) {
  EXPECT_EQ(why(""), "an unparseable address");
  EXPECT_EQ(why("localhost"), "an unparseable address");
  EXPECT_EQ(why("127.1"), "an unparseable address");  // inet_pton takes dotted quads only
  EXPECT_EQ(why(std::string(100, '1')), "an unparseable address");
}

TEST(AddressCheck, ClassifiesSocketAddressesAsConnectSeesThem) {
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_addr.s_addr = htonl(0x7f000001);
  auto r = classify_sockaddr(reinterpret_cast<sockaddr*>(&in), sizeof in);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "a loopback address");
  in.sin_addr.s_addr = htonl(0x08080808);
  EXPECT_FALSE(classify_sockaddr(reinterpret_cast<sockaddr*>(&in), sizeof in));
  // A truncated address is refused, not read past its end.
  EXPECT_TRUE(classify_sockaddr(reinterpret_cast<sockaddr*>(&in), 4));

  sockaddr_in6 in6{};
  in6.sin6_family = AF_INET6;
  ASSERT_EQ(inet_pton(AF_INET6, "::ffff:169.254.169.254", &in6.sin6_addr), 1);
  r = classify_sockaddr(reinterpret_cast<sockaddr*>(&in6), sizeof in6);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "an IPv4-mapped IPv6 address");

  sockaddr un{};
  un.sa_family = AF_UNIX;
  r = classify_sockaddr(&un, sizeof un);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "a non-IP address");
  EXPECT_TRUE(classify_sockaddr(nullptr, 0));
}

}  // namespace
}  // namespace skillbox::capabilities::http
