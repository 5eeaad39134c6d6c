// Which `skillbox test` fixture answers a request (cli/fixture_match.h), and what a failing test says
// about the closest one when none does.
#include "cli/fixture_match.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace skillbox::cli {
namespace {

using nlohmann::json;

FixtureRequest fixture(std::string label, std::string method, std::string target) {
  FixtureRequest f;
  f.label = std::move(label);
  f.method = std::move(method);
  f.target = std::move(target);
  return f;
}

ReceivedRequest request(std::string method, std::string target, std::string body = "",
                        std::vector<std::pair<std::string, std::string>> headers = {}) {
  return ReceivedRequest{std::move(method), std::move(target), std::move(headers), std::move(body)};
}

TEST(FixtureMatch, MethodAndTargetAloneMatchWhenTheFixtureNamesNothingElse) {
  const std::vector<FixtureRequest> fixtures = {fixture("http[0]", "GET", "/v1/weather?city=Paris")};
  EXPECT_EQ(matching_fixture(fixtures, request("GET", "/v1/weather?city=Paris", "ignored", {{"x-a", "b"}})),
            0u);
  EXPECT_FALSE(matching_fixture(fixtures, request("GET", "/v1/weather?city=Oslo")));
  EXPECT_FALSE(matching_fixture(fixtures, request("POST", "/v1/weather?city=Paris")));
  EXPECT_FALSE(matching_fixture(fixtures, request("GET", "/v1/weather")));
}

TEST(FixtureMatch, HeadersAreMatchedByNameWithoutCaseAndByExactValue) {
  FixtureRequest f = fixture("http[0]", "GET", "/x");
  f.headers = {{"x-api-key", "k-123"}};
  const std::vector<FixtureRequest> fixtures = {f};
  EXPECT_EQ(matching_fixture(fixtures, request("GET", "/x", "", {{"x-api-key", "k-123"}})), 0u);
  // Sent twice: one of them carries the value.
  EXPECT_EQ(
      matching_fixture(fixtures, request("GET", "/x", "", {{"x-api-key", "old"}, {"x-api-key", "k-123"}})),
      0u);
  EXPECT_FALSE(matching_fixture(fixtures, request("GET", "/x", "", {{"x-api-key", "K-123"}})));
  EXPECT_FALSE(matching_fixture(fixtures, request("GET", "/x")));

  EXPECT_EQ(fixture_differences(f, request("GET", "/x", "", {{"x-api-key", "k-999"}})),
            std::vector<std::string>{"header x-api-key: expected \"k-123\", got \"k-999\""});
  EXPECT_EQ(fixture_differences(f, request("GET", "/x")),
            std::vector<std::string>{"header x-api-key: expected \"k-123\", but the request had none"});
}

TEST(FixtureMatch, ABodyIsMatchedAsTextOrAsAJsonValue) {
  FixtureRequest text = fixture("http[0]", "POST", "/form");
  text.body = "a=1&b=2";
  EXPECT_TRUE(fixture_differences(text, request("POST", "/form", "a=1&b=2")).empty());
  EXPECT_EQ(fixture_differences(text, request("POST", "/form", "b=2&a=1")),
            std::vector<std::string>{"body: expected \"a=1&b=2\", got \"b=2&a=1\""});
  EXPECT_EQ(fixture_differences(text, request("POST", "/form")),
            std::vector<std::string>{"body: expected \"a=1&b=2\", but the request had none"});

  FixtureRequest value = fixture("http[0]", "POST", "/items");
  value.json = json{{"name", "pen"}, {"qty", 2}};
  EXPECT_TRUE(
      fixture_differences(value, request("POST", "/items", "{ \"qty\": 2,\n \"name\": \"pen\" }")).empty())
      << "key order and white space do not matter";
  EXPECT_EQ(
      fixture_differences(value, request("POST", "/items", R"({"name":"pen","qty":3})")),
      std::vector<std::string>{R"(body: expected JSON {"name":"pen","qty":2}, got {"name":"pen","qty":3})"});
  EXPECT_EQ(
      fixture_differences(value, request("POST", "/items", "name=pen")),
      std::vector<std::string>{R"(body: expected JSON {"name":"pen","qty":2}, got "name=pen", not JSON)"});

  // What a difference shows of the request is bounded.
  const std::string big(10000, 'x');
  const std::vector<std::string> lines = fixture_differences(text, request("POST", "/form", big));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_LT(lines[0].size(), 2 * kShownRequestBytes);
  EXPECT_NE(lines[0].find("(10000 bytes)"), std::string::npos) << lines[0];
}

TEST(FixtureMatch, TheClosestFixtureSharesThePathBeforeTheMethodBeforeTheBody) {
  FixtureRequest get = fixture("http[0]", "GET", "/v1/items");
  FixtureRequest other = fixture("http[1]", "POST", "/v1/orders");
  FixtureRequest post = fixture("http[2]", "POST", "/v1/items");
  post.json = json{{"qty", 2}};
  post.headers = {{"x-api-key", "k-123"}};
  const std::vector<FixtureRequest> fixtures = {get, other, post};

  // Same path and method as http[2], with another body and key: closer than http[0] (another method)
  // and http[1] (another path).
  const ReceivedRequest wrong = request("POST", "/v1/items", R"({"qty":3})", {{"x-api-key", "k-999"}});
  EXPECT_FALSE(matching_fixture(fixtures, wrong));
  EXPECT_EQ(closest_fixture(fixtures, wrong), 2u);
  EXPECT_EQ(fixture_differences(fixtures[2], wrong),
            (std::vector<std::string>{R"(header x-api-key: expected "k-123", got "k-999")",
                                      R"(body: expected JSON {"qty":2}, got {"qty":3})"}));

  // Another method on the same path is closer than the same method on another path.
  const ReceivedRequest del = request("DELETE", "/v1/items");
  EXPECT_EQ(closest_fixture(fixtures, del), 0u);
  EXPECT_EQ(fixture_differences(fixtures[0], del),
            std::vector<std::string>{"method: expected GET, got DELETE"});

  const ReceivedRequest query = request("GET", "/v1/items?page=2");
  EXPECT_EQ(closest_fixture(fixtures, query), 0u);
  EXPECT_EQ(fixture_differences(fixtures[0], query),
            std::vector<std::string>{"query: expected none, got ?page=2"});

  EXPECT_EQ(fixture_differences(fixtures[1], request("POST", "/v1/order")),
            std::vector<std::string>{"path: expected /v1/orders, got /v1/order"});
  EXPECT_FALSE(closest_fixture({}, del));
}

}  // namespace
}  // namespace skillbox::cli
