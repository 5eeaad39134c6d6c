// cli/fixture_match.cpp — see fixture_match.h.
#include "cli/fixture_match.h"

#include <algorithm>
#include <string_view>

#include "base/json_text.h"

namespace skillbox::cli {
namespace {

// Weights of the differences closest_fixture() adds up: a fixture for another path is further away
// than one for the same path with another method or body.
constexpr int kPathWeight = 64;
constexpr int kQueryWeight = 16;
constexpr int kMethodWeight = 8;
constexpr int kBodyWeight = 4;
constexpr int kHeaderWeight = 1;

std::string shown(std::string_view text) {
  const bool cut = text.size() > kShownRequestBytes;
  std::string out(1, '"');
  out.append(text.data(), cut ? kShownRequestBytes : text.size());
  out.append(cut ? "...\"" : "\"");
  if (cut) out.append(" (" + std::to_string(text.size()) + " bytes)");
  return out;
}

std::string shown_json(const nlohmann::json& value) {
  std::string text = base::json_text::write(value);
  if (text.size() > kShownRequestBytes) {
    text.resize(kShownRequestBytes);
    text += "...";
  }
  return text;
}

std::pair<std::string_view, std::string_view> path_and_query(std::string_view target) {
  const size_t q = target.find('?');
  if (q == std::string_view::npos) return {target, {}};
  return {target.substr(0, q), target.substr(q)};
}

struct Difference {
  int weight;
  std::string line;
};

std::vector<Difference> differences(const FixtureRequest& want, const ReceivedRequest& got) {
  std::vector<Difference> out;
  const auto [want_path, want_query] = path_and_query(want.target);
  const auto [got_path, got_query] = path_and_query(got.target);
  if (want_path != got_path)
    out.push_back(
        {kPathWeight, "path: expected " + std::string(want_path) + ", got " + std::string(got_path)});
  if (want_query != got_query)
    out.push_back({kQueryWeight, "query: expected " +
                                     (want_query.empty() ? "none" : std::string(want_query)) + ", got " +
                                     (got_query.empty() ? "none" : std::string(got_query))});
  if (want.method != got.method)
    out.push_back({kMethodWeight, "method: expected " + want.method + ", got " + got.method});
  for (const auto& [name, value] : want.headers) {
    const std::string* other = nullptr;
    bool found = false;
    for (const auto& [n, v] : got.headers) {
      if (n != name) continue;
      if (v == value) found = true;
      if (other == nullptr) other = &v;
    }
    if (found) continue;
    out.push_back(
        {kHeaderWeight, "header " + name + ": expected " + shown(value) +
                            (other == nullptr ? ", but the request had none" : ", got " + shown(*other))});
  }
  if (want.body && *want.body != got.body)
    out.push_back(
        {kBodyWeight, "body: expected " + shown(*want.body) +
                          (got.body.empty() ? ", but the request had none" : ", got " + shown(got.body))});
  if (want.json) {
    const nlohmann::json parsed = base::json_text::parse(got.body);
    if (got.body.empty())
      out.push_back(
          {kBodyWeight, "body: expected JSON " + shown_json(*want.json) + ", but the request had none"});
    else if (parsed.is_discarded())
      out.push_back({kBodyWeight, "body: expected JSON " + shown_json(*want.json) + ", got " +
                                      shown(got.body) + ", not JSON"});
    else if (parsed != *want.json)
      out.push_back(
          {kBodyWeight, "body: expected JSON " + shown_json(*want.json) + ", got " + shown_json(parsed)});
  }
  return out;
}

}  // namespace

std::vector<std::string> fixture_differences(const FixtureRequest& want, const ReceivedRequest& got) {
  std::vector<std::string> lines;
  for (Difference& d : differences(want, got)) lines.push_back(std::move(d.line));
  return lines;
}

std::optional<size_t> matching_fixture(const std::vector<FixtureRequest>& fixtures,
                                       const ReceivedRequest& got) {
  for (size_t i = 0; i < fixtures.size(); ++i)
    if (differences(fixtures[i], got).empty()) return i;
  return std::nullopt;
}

std::optional<size_t> closest_fixture(const std::vector<FixtureRequest>& fixtures,
                                      const ReceivedRequest& got) {
  std::optional<size_t> best;
  int best_weight = 0;
  for (size_t i = 0; i < fixtures.size(); ++i) {
    int weight = 0;
    for (const Difference& d : differences(fixtures[i], got)) weight += d.weight;
    if (!best || weight < best_weight) {
      best = i;
      best_weight = weight;
    }
  }
  return best;
}

}  // namespace skillbox::cli
