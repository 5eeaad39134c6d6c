// cli/fixture_match.h — which `skillbox test` fixture answers a request, and, when none does, which one
// came closest and how the request differed from it.
//
// A fixture matches a request when all of these hold (docs/cli.md "skillbox test"):
//  - the method, exactly (fixtures hold it upper case; HTTP methods are case-sensitive, RFC 9110 9.1);
//  - the path and query as sent ("/v1/weather?city=Paris"), byte for byte;
//  - each header the fixture names (names compared case-insensitively, RFC 9110 5.1) was sent with
//    exactly that value at least once; headers it does not name are ignored;
//  - the body, when the fixture gives one: as text, byte for byte; or as JSON, parsed and compared
//    as a value, so key order and white space do not matter.
// Pure functions of their arguments: unit-tested in-process (tests/cli/fixture_match_test.cpp).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace skillbox::cli {

/// What a fixture requires of a request.
struct FixtureRequest {
  std::string label;   // where the fixture is in its test, as messages name it: "http[1]"
  std::string method;  // upper case
  std::string target;  // path and query as sent: "/v1/weather?city=Paris"
  /// Headers the request must carry: lower-case name, exact value.
  std::vector<std::pair<std::string, std::string>> headers;
  std::optional<std::string> body;     // the body, byte for byte
  std::optional<nlohmann::json> json;  // the body, parsed as JSON and compared as a value
};

/// A request as the fixture server received it.
struct ReceivedRequest {
  std::string method;
  std::string target;
  std::vector<std::pair<std::string, std::string>> headers;  // lower-case names, in arrival order
  std::string body;
};

/// How `got` differs from what `want` requires, one short line per difference ("header x-api-key:
/// expected \"k1\", got \"k2\""); empty when `want` matches `got`. Values from the request are cut
/// to kShownRequestBytes; lines are not escaped (the caller escapes what it prints).
[[nodiscard]] std::vector<std::string> fixture_differences(const FixtureRequest& want,
                                                           const ReceivedRequest& got);

/// The index in `fixtures` of the one that matches `got` (the first, when several do), or nullopt.
[[nodiscard]] std::optional<size_t> matching_fixture(const std::vector<FixtureRequest>& fixtures,
                                                     const ReceivedRequest& got);

/// The index of the fixture that came closest to matching `got`, or nullopt when `fixtures` is
/// empty. Differences weigh, most first: the path, the query, the method, the body, each header; among
/// equals, the earliest fixture wins.
[[nodiscard]] std::optional<size_t> closest_fixture(const std::vector<FixtureRequest>& fixtures,
                                                    const ReceivedRequest& got);

/// How much of a request's body or header value a difference shows, in bytes.
inline constexpr size_t kShownRequestBytes = 200;

}  // namespace skillbox::cli
