// state/store_values.cpp — JSON numbers and JSON value equality for the store's atomic operations.
#include "state/store_values.h"

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <system_error>

#include "base/json_text.h"

namespace skillbox::state {

std::string json_number_text(double value) {
  if (value == 0 || !std::isfinite(value)) return "0";  // -0 too; callers pass finite values
  // The shortest round-trip digits and their exponent, from the scientific form "d.ddde+XX".
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  if (ec != std::errc()) return "0";
  const std::string_view sci(buf, static_cast<size_t>(end - buf));
  const bool negative = sci.front() == '-';
  const size_t e_at = sci.find('e');
  std::string digits;
  for (char c : sci.substr(negative ? 1 : 0, e_at - (negative ? 1 : 0)))
    if (c != '.') digits += c;
  int exponent = 0;
  const std::string_view exp_text = sci.substr(e_at + 1);
  (void)std::from_chars(exp_text.data() + (exp_text.front() == '+' ? 1 : 0),
                        exp_text.data() + exp_text.size(), exponent);
  // ECMA-262 Number::toString(x): k digits, the decimal point after n of them.
  const int k = static_cast<int>(digits.size());
  const int n = exponent + 1;
  std::string out = negative ? "-" : "";
  if (k <= n && n <= 21) {
    out += digits;
    out.append(static_cast<size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out += digits.substr(0, static_cast<size_t>(n));
    out += '.';
    out += digits.substr(static_cast<size_t>(n));
  } else if (-6 < n && n <= 0) {
    out += "0.";
    out.append(static_cast<size_t>(-n), '0');
    out += digits;
  } else {
    out += digits.front();
    if (k > 1) {
      out += '.';
      out += digits.substr(1);
    }
    out += 'e';
    out += n - 1 >= 0 ? '+' : '-';
    out += std::to_string(std::abs(n - 1));
  }
  return out;
}

std::optional<double> json_number_value(std::string_view json) {
  if (base::json_text::check(json).kind != base::json_text::Kind::number) return std::nullopt;
  const size_t begin = json.find_first_not_of(" \t\r\n");
  const size_t last = json.find_last_not_of(" \t\r\n");
  const std::string_view number = json.substr(begin, last - begin + 1);
  double value = 0;
  const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  // A JSON number is a valid from_chars number; out of range ("1e999") is not a finite value.
  if (ec != std::errc() || ptr != number.data() + number.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

bool json_values_equal(std::string_view a, std::string_view b) {
  if (a == b) return true;
  // Trees of nlohmann::json: objects are sorted maps (member order does not count) and its operator==
  // compares integers and doubles by value. Stored values are nested at most kMaxDepth levels, which
  // keeps the recursive comparison shallow.
  const nlohmann::json left = base::json_text::parse(a);
  const nlohmann::json right = base::json_text::parse(b);
  if (left.is_discarded() || right.is_discarded()) return false;
  return left == right;
}

}  // namespace skillbox::state
