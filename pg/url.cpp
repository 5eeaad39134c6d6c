// pg/url.cpp — redacting passwords from connection URLs.
#include "pg/url.h"

#include <optional>

namespace skillbox::pg {
namespace {

// The password of a postgres:// URL's userinfo ("user:password@"), as written (percent-encoded).
std::optional<std::string> userinfo_password(std::string_view url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return std::nullopt;
  const std::string_view rest = url.substr(scheme_end + 3);
  const size_t authority_end = rest.find_first_of("/?");
  const std::string_view authority = rest.substr(0, authority_end);
  const size_t at = authority.rfind('@');
  if (at == std::string_view::npos) return std::nullopt;
  const std::string_view userinfo = authority.substr(0, at);
  const size_t colon = userinfo.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  return std::string(userinfo.substr(colon + 1));
}

// The value of the `password` query parameter, as written.
std::optional<std::string> query_password(std::string_view url) {
  const size_t q = url.find('?');
  if (q == std::string_view::npos) return std::nullopt;
  std::string_view query = url.substr(q + 1);
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    if (pair.substr(0, 9) == "password=") return std::string(pair.substr(9));
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

void replace_all(std::string& text, const std::string& what) {
  if (what.empty()) return;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 3))
    text.replace(at, what.size(), "***");
}

}  // namespace

bool is_postgres_url(std::string_view url) {
  return url.substr(0, 11) == "postgres://" || url.substr(0, 13) == "postgresql://";
}

std::string redact_url(std::string_view url) {
  if (!is_postgres_url(url)) return "(a connection string)";
  return without_password(std::string(url), url);
}

std::string without_password(std::string text, std::string_view url) {
  if (auto p = userinfo_password(url)) replace_all(text, *p);
  if (auto p = query_password(url)) replace_all(text, *p);
  return text;
}

}  // namespace skillbox::pg
