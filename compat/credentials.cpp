// compat/credentials.cpp — parse_credentials / load_credentials_file (skillbox/credentials.h).
//
// The file holds secrets, so an error never quotes a value: only key paths and what was expected.
#include "skillbox/credentials.h"

#include <string>

#include "base/file_read.h"
#include "base/skill_id.h"
#include "base/utf8.h"
#include "policy/strict_json.h"
#include "skillbox/policy.h"

namespace skillbox {
namespace {

using json = nlohmann::json;
using policy::KeyPath;

constexpr const char* kDoc = "credentials file";
constexpr uint64_t kMaxCredentialsBytes = 1024 * 1024;

struct Reader {
  std::string problems;
  void add(const KeyPath& at, const std::string& what) {
    problems += (problems.empty() ? "" : "\n") + std::string(kDoc) + ": " + at.str() + ": " + what;
  }
  bool string(const json& v, const KeyPath& at, std::string& out) {
    if (!v.is_string()) {
      add(at, "expected a string");
      return false;
    }
    out = v.get<std::string>();
    return true;
  }
  void hosts(const json& v, const KeyPath& at, std::vector<std::string>& out) {
    if (!v.is_array()) {
      add(at, "expected an array of URL prefixes such as \"https://api.example.com/\"");
      return;
    }
    for (size_t i = 0; i < v.size(); ++i) {
      std::string s;
      if (!string(v[i], at.index(i), s)) continue;
      HttpAllowList check;
      if (auto why = check.push_back(s)) {
        add(at.index(i), "not a URL prefix: " + *why);
        continue;
      }
      out.push_back(check.texts().front());
    }
  }
};

}  // namespace

Result<std::map<std::string, SkillCredentials>> parse_credentials(std::string_view text) {
  if (text.size() > kMaxCredentialsBytes) return Error{std::string(kDoc) + ": larger than 1 MiB"};
  if (!base::utf8::is_valid(text)) return Error{std::string(kDoc) + ": not valid UTF-8"};
  Result<json> doc = policy::parse_strict_json(text, kDoc);
  if (!doc) return doc.error();
  if (!doc->is_object())
    return Error{std::string(kDoc) + ": expected one JSON object {\"<skill id>\": {...}}"};
  Reader r;
  std::map<std::string, SkillCredentials> out;
  const KeyPath root;
  for (const auto& [id, entry] : doc->items()) {
    const KeyPath at = root.key(id);
    if (!base::is_valid_skill_id(id))
      r.add(at, "not a skill id (1 to 64 characters from a-z, 0-9, '.', '_', '-')");
    if (!entry.is_object()) {
      r.add(at, "expected an object with \"oauth\" and/or \"auth\"");
      continue;
    }
    SkillCredentials creds;
    for (const auto& [kind, c] : entry.items()) {
      const KeyPath k = at.key(kind);
      if (!c.is_object()) {
        r.add(k, "expected an object");
        continue;
      }
      if (kind == "oauth") {
        OAuthCredential o;
        for (const auto& [key, v] : c.items()) {
          if (key == "credentialId")
            (void)r.string(v, k.key(key), o.credential_id);
          else if (key == "accessToken")
            (void)r.string(v, k.key(key), o.access_token);
          else if (key == "baseUrl")
            (void)r.string(v, k.key(key), o.base_url);
          else if (key == "hosts")
            r.hosts(v, k.key(key), o.hosts);
          else
            r.add(k.key(key), "unknown key; expected credentialId, accessToken, baseUrl, hosts");
        }
        if (o.access_token.empty()) r.add(k.key("accessToken"), "missing or empty");
        if (o.base_url.empty()) r.add(k.key("baseUrl"), "missing; oauth.fetch(path) needs the base URL");
        creds.oauth = std::move(o);
      } else if (kind == "auth") {
        AuthCredential a;
        for (const auto& [key, v] : c.items()) {
          if (key == "mode") {
            (void)r.string(v, k.key(key), a.mode);
          } else if (key == "credentials") {
            if (!v.is_object()) {
              r.add(k.key(key), "expected an object of strings");
              continue;
            }
            for (const auto& [name, value] : v.items()) {
              std::string s;
              if (r.string(value, k.key(key).key(name), s)) a.credentials.emplace(name, std::move(s));
            }
          } else if (key == "hosts") {
            r.hosts(v, k.key(key), a.hosts);
          } else {
            r.add(k.key(key), "unknown key; expected mode, credentials, hosts");
          }
        }
        if (a.mode.empty()) r.add(k.key("mode"), "missing; one of \"managed\", \"self_hosted\", \"text\"");
        creds.auth = std::move(a);
      } else {
        r.add(k, "unknown key; expected \"oauth\" or \"auth\"");
      }
    }
    out.emplace(id, std::move(creds));
  }
  if (!r.problems.empty()) return Error{r.problems};
  return out;
}

std::string credentials_document(const std::map<std::string, SkillCredentials>& credentials) {
  json doc = json::object();
  for (const auto& [id, c] : credentials) {
    json entry = json::object();
    if (c.oauth) {
      entry["oauth"] = {{"credentialId", c.oauth->credential_id},
                        {"accessToken", c.oauth->access_token},
                        {"baseUrl", c.oauth->base_url},
                        {"hosts", c.oauth->hosts}};
    }
    if (c.auth) {
      entry["auth"] = {
          {"mode", c.auth->mode}, {"credentials", c.auth->credentials}, {"hosts", c.auth->hosts}};
    }
    doc[id] = std::move(entry);
  }
  return doc.dump();
}

Result<std::map<std::string, SkillCredentials>> load_credentials_file(const std::filesystem::path& file) {
  auto text = base::read_file(file.c_str(), {.max_bytes = kMaxCredentialsBytes});
  if (!text) return Error{"cannot read the credentials file: " + text.error().message};
  return parse_credentials(*text);
}

}  // namespace skillbox

namespace skillbox {

Result<std::pair<std::string, std::string>> parse_origin_mapping(std::string_view text) {
  const size_t eq = text.find('=');
  const std::string shown(text.substr(0, 200));
  if (eq == std::string_view::npos)
    return Error{
        "expected FROM=TO, two origins such as https://api.notion.com=http://127.0.0.1:8080, got \"" + shown +
        "\""};
  std::pair<std::string, std::string> out;
  for (int side = 0; side < 2; ++side) {
    const std::string_view part = side == 0 ? text.substr(0, eq) : text.substr(eq + 1);
    HttpAllowList list;
    const auto why = list.push_back(part);
    if (why || list.entries().empty() || list.entries().front().path_prefix != "/" ||
        list.entries().front().subdomains || (!part.empty() && part.back() == '/'))
      return Error{std::string(side == 0 ? "FROM" : "TO") +
                   " must be an origin scheme://host[:port] without a path" + (why ? " (" + *why + ")" : "") +
                   ", got \"" + shown + "\""};
    std::string origin = list.texts().front();
    origin.pop_back();  // the normalized entry ends in "/"
    (side == 0 ? out.first : out.second) = std::move(origin);
  }
  return out;
}

}  // namespace skillbox
