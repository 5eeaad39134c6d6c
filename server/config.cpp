// server/config.cpp — see config.h. TOML is parsed by toml++; this file only checks the tree.
#include "server/config.h"

#include <toml++/toml.h>

#include <boost/asio/ip/address.hpp>
#include <charconv>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "base/skill_id.h"
#include "pg/url.h"
#include "skillbox/skillbox.h"

namespace skillbox::server {
namespace {

/// Largest config file read: far more than any real one, small enough to read whole.
constexpr size_t kMaxConfigBytes = size_t{1024} * 1024;

/// Collects problems as "SOURCE: KEY.PATH: message" lines.
struct Problems {
  std::string source;
  std::string text;
  void add(const std::string& path, const std::string& what) {
    text += source + ": " + (path.empty() ? "" : path + ": ") + what + "\n";
  }
};

std::string describe(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string:
      return "the string \"" + std::string(*node.value<std::string_view>()) + "\"";
    case toml::node_type::integer:
      return std::to_string(*node.value<int64_t>());
    case toml::node_type::boolean:
      return *node.value<bool>() ? "true" : "false";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    default:
      return "a date or time";
  }
}

/// An integer from `min` to `max` at `path`, or a problem naming the range.
std::optional<uint64_t> integer_in(const toml::node& node, const std::string& path, uint64_t min,
                                   uint64_t max, Problems& p) {
  const std::optional<int64_t> v = node.value_exact<int64_t>();
  if (!v || *v < 0 || static_cast<uint64_t>(*v) < min || static_cast<uint64_t>(*v) > max) {
    p.add(path, "expected an integer from " + std::to_string(min) + " to " + std::to_string(max) + ", got " +
                    describe(node));
    return std::nullopt;
  }
  return static_cast<uint64_t>(*v);
}

std::optional<std::string> string_at(const toml::node& node, const std::string& path, Problems& p) {
  if (const auto s = node.value_exact<std::string>()) return *s;
  p.add(path, "expected a string, got " + describe(node));
  return std::nullopt;
}

std::filesystem::path path_at(const toml::node& node, const std::string& path,
                              const std::filesystem::path& base, Problems& p) {
  const std::optional<std::string> s = string_at(node, path, p);
  if (!s) return {};
  if (s->empty() || s->find('\0') != std::string::npos) {
    p.add(path, "expected a path, got an empty string");
    return {};
  }
  return (base / *s).lexically_normal();
}

void read_ceilings(const toml::table& table, const std::string& path, LimitOverrides& out, Problems& p) {
  for (auto&& [key, node] : table) {
    const std::string at = path + "." + std::string(key.str());
    if (key == "memory_mb") {
      if (auto v = integer_in(node, at, 1, Limits::kMaxMemoryBytes >> 20, p)) out.memory_bytes = *v << 20;
    } else if (key == "timeout_ms") {
      if (auto v = integer_in(node, at, 1, Limits::kMaxTimeoutMs, p)) out.timeout_ms = *v;
    } else if (key == "steps") {
      if (auto v = integer_in(node, at, 1, Limits::kMaxSteps, p)) out.steps = *v;
    } else {
      p.add(at, "unknown key; the ceilings are memory_mb, timeout_ms and steps");
    }
  }
}

/// `[tenants.NAME.code]`: what code the tenant may send.
void read_code(const toml::node& node, const std::string& path, CodeConfig& out, Problems& p) {
  const toml::table* table = node.as_table();
  if (table == nullptr) {
    p.add(path, "expected a table, got " + describe(node));
    return;
  }
  for (auto&& [key, value] : *table) {
    const std::string at = path + "." + std::string(key.str());
    // The node is passed in: clang before 16 cannot capture a structured binding.
    const auto flag = [&](const toml::node& given, bool& out_flag) {
      if (const std::optional<bool> b = given.value_exact<bool>()) {
        out_flag = *b;
      } else {
        p.add(at, "expected true or false, got " + describe(given));
      }
    };
    if (key == "allow_upload") {
      flag(value, out.allow_upload);
    } else if (key == "allow_inline") {
      flag(value, out.allow_inline);
    } else if (key == "max_files") {
      if (auto v = integer_in(value, at, 1, 100'000, p)) out.max_files = *v;
    } else if (key == "max_bytes") {
      if (auto v = integer_in(value, at, 1, uint64_t{1} << 30, p)) out.max_bytes = *v;
    } else if (key == "keep_versions") {
      if (auto v = integer_in(value, at, 1, 1000, p)) out.keep_versions = *v;
    } else {
      p.add(at, "unknown key; [code] has allow_upload, allow_inline, max_files, max_bytes and keep_versions");
    }
  }
}

void read_key_hashes(const toml::node& node, const std::string& path, std::vector<KeyHash>& out,
                     Problems& p) {
  const toml::array* list = node.as_array();
  if (list == nullptr) {
    p.add(path, "expected an array of SHA-256 hashes (64 hex digits each), got " + describe(node));
    return;
  }
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string at = path + "[" + std::to_string(i) + "]";
    const std::optional<std::string> s = string_at(*list->get(i), at, p);
    if (!s) continue;
    if (const std::optional<KeyHash> h = parse_key_hash(*s)) {
      out.push_back(*h);
    } else {
      p.add(at, "expected a SHA-256 hash as 64 hex digits (sha256sum of the key), got a string of " +
                    std::to_string(s->size()) + " characters");
    }
  }
}

/// An environment variable name as env files and manifests write them: [A-Za-z_][A-Za-z0-9_]*.
bool is_env_name(std::string_view name) {
  if (name.empty() || name.size() > 256) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    if (!letter && (i == 0 || c < '0' || c > '9')) return false;
  }
  return true;
}

/// `[tenants.NAME.env]`: NAME = "value" pairs. A value may be a secret: no message quotes one.
void read_env(const toml::node& node, const std::string& path, std::map<std::string, std::string>& out,
              Problems& p) {
  const toml::table* table = node.as_table();
  if (table == nullptr) {
    p.add(path, "expected a table of NAME = \"value\" ([" + path + "]), got " + describe(node));
    return;
  }
  for (auto&& [key, value] : *table) {
    const std::string at = path + "." + std::string(key.str());
    if (!is_env_name(key.str())) {
      p.add(at, "not an environment variable name ([A-Za-z_][A-Za-z0-9_]*, at most 256 characters)");
      continue;
    }
    const std::optional<std::string> v = value.value_exact<std::string>();
    if (!v) {
      p.add(at, "expected a string value");
    } else if (v->find('\0') != std::string::npos) {
      p.add(at, "the value holds a NUL character");
    } else {
      out.emplace(std::string(key.str()), *v);
    }
  }
}

/// `[tenants.NAME.credentials]`: the credentials document (skillbox/credentials.h) as TOML, checked by
/// the library's own parser, whose problems are given back under this key path. No value is quoted.
void read_credentials(const toml::node& node, const std::string& path,
                      std::map<std::string, SkillCredentials>& out, Problems& p) {
  const toml::table* table = node.as_table();
  if (table == nullptr) {
    p.add(path, "expected a table such as [" + path + ".SKILL_ID.oauth], got " + describe(node));
    return;
  }
  std::ostringstream text;
  text << toml::json_formatter{*table};
  Result<std::map<std::string, SkillCredentials>> parsed = parse_credentials(text.str());
  if (parsed) {
    out = std::move(*parsed);
    return;
  }
  constexpr std::string_view prefix = "credentials file: ";
  std::istringstream lines(parsed.error().message);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with(prefix)) line.erase(0, prefix.size());
    p.add("", path + (line.starts_with("[") ? "" : ".") + line);
  }
}

/// `[tenants.NAME.origin_map]`: "FROM" = "TO" origins, each checked as `--map-origin FROM=TO` is.
void read_origin_map(const toml::node& node, const std::string& path,
                     std::vector<std::pair<std::string, std::string>>& out, Problems& p) {
  const toml::table* table = node.as_table();
  if (table == nullptr) {
    p.add(path,
          "expected a table of \"FROM\" = \"TO\" origins, such as \"https://api.example.com\" = "
          "\"http://127.0.0.1:8080\", got " +
              describe(node));
    return;
  }
  for (auto&& [key, value] : *table) {
    const std::string at = path + ".\"" + std::string(key.str()) + "\"";
    const std::optional<std::string> to = string_at(value, at, p);
    if (!to) continue;
    Result<std::pair<std::string, std::string>> mapping =
        parse_origin_mapping(std::string(key.str()) + "=" + *to);
    if (mapping) {
      out.push_back(std::move(*mapping));
    } else {
      p.add(at, mapping.error().message);
    }
  }
}

/// A tenant key that is not one of its bounds or folders: env values, credentials, origin map, quotas.
/// False when `key` is none of them.
bool read_tenant_extra(std::string_view key, const toml::node& value, const std::string& at, TenantConfig& t,
                       Problems& p) {
  if (key == "env") {
    read_env(value, at, t.env, p);
  } else if (key == "credentials") {
    read_credentials(value, at, t.credentials, p);
  } else if (key == "origin_map") {
    read_origin_map(value, at, t.origin_map, p);
  } else if (key == "runs_per_minute") {
    if (auto v = integer_in(value, at, 1, 1'000'000, p)) t.quota.runs_per_minute = *v;
  } else if (key == "cpu_seconds_per_minute") {
    if (auto v = integer_in(value, at, 1, 1'000'000, p)) t.quota.cpu_seconds_per_minute = *v;
  } else {
    return false;
  }
  return true;
}

void read_tenant(const std::string& name, const toml::node& node, const std::filesystem::path& base,
                 ServerConfig& config, Problems& p) {
  const std::string path = "tenants." + name;
  const toml::table* table = node.as_table();
  if (table == nullptr) {
    p.add(path, "expected a table ([" + path + "]), got " + describe(node));
    return;
  }
  TenantConfig t;
  t.id = name;
  if (!base::is_valid_skill_id(name)) p.add(path, "a tenant name must be " + std::string(base::kSkillIdRule));
  for (auto&& [key, value] : *table) {
    const std::string at = path + "." + std::string(key.str());
    if (key == "key_sha256") {
      read_key_hashes(value, at, t.key_hashes, p);
    } else if (key == "skills") {
      t.skills_dir = path_at(value, at, base, p);
    } else if (key == "data_dir") {
      t.data_dir = path_at(value, at, base, p);
    } else if (key == "max_concurrent_runs") {
      if (auto v = integer_in(value, at, 1, 10'000, p)) t.max_concurrent_runs = *v;
    } else if (key == "max_queued_runs") {
      if (auto v = integer_in(value, at, 0, 100'000, p)) t.max_queued_runs = *v;
    } else if (key == "weight") {
      if (auto v = integer_in(value, at, 1, 1000, p)) t.weight = *v;
    } else if (key == "ceilings") {
      if (const toml::table* c = value.as_table()) {
        read_ceilings(*c, at, t.ceilings, p);
      } else {
        p.add(at, "expected a table, got " + describe(value));
      }
    } else if (key == "code") {
      read_code(value, at, t.code, p);
    } else if (!read_tenant_extra(key.str(), value, at, t, p)) {
      p.add(
          at,
          "unknown key; a tenant has key_sha256, skills, data_dir, max_concurrent_runs, max_queued_runs, "
          "weight, ceilings, code, runs_per_minute, cpu_seconds_per_minute, env, credentials and origin_map");
    }
  }
  if (!table->contains("skills")) p.add(path, "missing skills: the folder of the tenant's skill folders");
  if (!table->contains("data_dir")) p.add(path, "missing data_dir: the tenant's own data directory");
  config.tenants.push_back(std::move(t));
}

/// A listener written as a table: {address = "127.0.0.1:9000", auth = "none", tenant = "NAME"}, or
/// {address = "127.0.0.1:8443", tls_cert = "cert.pem", tls_key = "key.pem"}.
void read_listener_table(const toml::table& table, const std::string& at, const std::filesystem::path& base,
                         ServerConfig& config, Problems& p) {
  std::optional<Listener> l;
  std::string auth = "key";
  std::string tenant;
  std::filesystem::path tls_cert;
  std::filesystem::path tls_key;
  for (auto&& [key, value] : table) {
    const std::string k = at + "." + std::string(key.str());
    if (key == "address") {
      if (const std::optional<std::string> s = string_at(value, k, p)) {
        Result<Listener> parsed = parse_listener(*s);
        if (parsed) {
          l = std::move(*parsed);
        } else {
          p.add(k, parsed.error().message);
        }
      }
    } else if (key == "auth") {
      if (const std::optional<std::string> s = string_at(value, k, p)) {
        if (*s != "key" && *s != "none") {
          p.add(k, "expected \"key\" (the default: a tenant's API key) or \"none\", got \"" + *s + "\"");
        } else {
          auth = *s;
        }
      }
    } else if (key == "tenant") {
      if (const std::optional<std::string> s = string_at(value, k, p)) tenant = *s;
    } else if (key == "tls_cert") {
      tls_cert = path_at(value, k, base, p);
    } else if (key == "tls_key") {
      tls_key = path_at(value, k, base, p);
    } else {
      p.add(k, "unknown key; a listener table has address, auth, tenant, tls_cert and tls_key");
    }
  }
  if (!table.contains("address")) {
    p.add(at, "missing address, such as \"127.0.0.1:8080\"");
    return;
  }
  if (!l) return;
  if (auth == "none" && tenant.empty())
    p.add(at + ".tenant", "auth = \"none\" needs tenant, the name of the one tenant this listener serves");
  if (auth != "none" && !tenant.empty())
    p.add(at + ".tenant", "only a listener with auth = \"none\" names a tenant (keys name it otherwise)");
  if (table.contains("tls_cert") != table.contains("tls_key"))
    p.add(at, "TLS needs both tls_cert (the certificate chain, PEM) and tls_key (its private key, PEM)");
  if (table.contains("tls_cert") && l->kind != Listener::Kind::tcp)
    p.add(at, "TLS is for IP:PORT listeners; a UNIX socket's file mode already decides who connects");
  l->auth_none = auth == "none";
  l->tenant = tenant;
  l->tls_cert = tls_cert;
  l->tls_key = tls_key;
  config.listeners.push_back(std::move(*l));
}

void read_listen(const toml::node& node, const std::filesystem::path& base, ServerConfig& config,
                 Problems& p) {
  const toml::array* list = node.as_array();
  if (list == nullptr) {
    p.add("listen", "expected an array such as [\"127.0.0.1:8080\"], got " + describe(node));
    return;
  }
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string at = "listen[" + std::to_string(i) + "]";
    const toml::node& entry = (*list)[i];
    if (entry.is_table()) {
      read_listener_table(*entry.as_table(), at, base, config, p);
      continue;
    }
    const std::optional<std::string> s = string_at(entry, at, p);
    if (!s) continue;
    Result<Listener> l = parse_listener(*s);
    if (l) {
      config.listeners.push_back(std::move(*l));
    } else {
      p.add(at, l.error().message);
    }
  }
}

/// `[mcp]`: the /mcp endpoint's origins and sessions.
void read_mcp(const toml::node& node, McpConfig& out, Problems& p) {
  const toml::table* table = node.as_table();
  if (table == nullptr) {
    p.add("mcp", "expected a table ([mcp]), got " + describe(node));
    return;
  }
  for (auto&& [key, value] : *table) {
    const std::string at = "mcp." + std::string(key.str());
    if (key == "allowed_origins") {
      const toml::array* list = value.as_array();
      if (list == nullptr) {
        p.add(at, "expected an array of origins such as [\"http://localhost:*\"], got " + describe(value));
        continue;
      }
      out.allowed_origins.clear();
      for (size_t i = 0; i < list->size(); ++i) {
        const std::string item = at + "[" + std::to_string(i) + "]";
        const std::optional<std::string> s = string_at(*list->get(i), item, p);
        if (!s) continue;
        const bool scheme = s->starts_with("http://") || s->starts_with("https://");
        const size_t host = s->find("://") + 3;
        if (!scheme || s->size() <= host || s->find('/', host) != std::string::npos) {
          p.add(item,
                "expected an origin: http:// or https://, a host, and :PORT or :* (any port), with "
                "no path, such as \"https://app.example.com\" or \"http://localhost:*\"; got \"" +
                    *s + "\"");
          continue;
        }
        out.allowed_origins.push_back(*s);
      }
    } else if (key == "max_sessions_per_tenant") {
      if (auto v = integer_in(value, at, 1, 100'000, p)) out.max_sessions_per_tenant = *v;
    } else if (key == "session_idle_timeout_ms") {
      if (auto v = integer_in(value, at, 1000, uint64_t{7} * 24 * 3'600'000, p))
        out.session_idle_timeout_ms = *v;
    } else if (key == "tool_names") {
      if (const std::optional<std::string> v = string_at(value, at, p)) {
        if (*v == "bare" || *v == "prefixed")
          out.bare_tool_names = *v == "bare";
        else
          p.add(at,
                "expected \"prefixed\" (<skill-id>__<tool>, the default) or \"bare\" (a bundle's own tool "
                "names), got \"" +
                    *v + "\"");
      }
    } else {
      p.add(at,
            "unknown key; [mcp] has allowed_origins, max_sessions_per_tenant, session_idle_timeout_ms and "
            "tool_names");
    }
  }
}

/// `[database]`: the PostgreSQL of the tenants' state.
void read_database(const toml::node& node, const std::filesystem::path& base, DatabaseConfig& out,
                   Problems& p) {
  const toml::table* table = node.as_table();
  if (table == nullptr) {
    p.add("database", "expected a table ([database] with url = \"postgres://...\"), got " + describe(node));
    return;
  }
  for (auto&& [key, value] : *table) {
    const std::string at = "database." + std::string(key.str());
    if (key == "url") {
      const std::optional<std::string> url = string_at(value, at, p);
      if (url && !pg::is_postgres_url(*url)) {
        p.add(at,
              "expected a postgres:// or postgresql:// URL (postgres://USER:PASSWORD@HOST:PORT/DB), got \"" +
                  pg::redact_url(*url) + "\"");
      } else if (url) {
        out.url = *url;
      }
    } else if (key == "max_connections") {
      if (auto v = integer_in(value, at, 1, 1000, p)) out.max_connections = static_cast<size_t>(*v);
    } else if (key == "vault_key_file") {
      const std::optional<std::string> file = string_at(value, at, p);
      if (file && (file->empty() || file->find('\0') != std::string::npos)) {
        p.add(at, "expected the path of the vault key file (64 hex digits, mode 0600)");
      } else if (file) {
        out.vault_key_file = (base / *file).lexically_normal();
      }
    } else {
      p.add(at, "unknown key; [database] has url, max_connections and vault_key_file");
    }
  }
  if (!table->contains("url")) p.add("database.url", "missing; give the database as a postgres:// URL");
}

void read_async(const toml::node& node, AsyncConfig& out, Problems& p) {
  const toml::table* table = node.as_table();
  if (table == nullptr) {
    p.add("async", "expected a table ([async] with lease_ms, max_attempts, poll_ms), got " + describe(node));
    return;
  }
  for (auto&& [key, value] : *table) {
    const std::string at = "async." + std::string(key.str());
    if (key == "lease_ms") {
      if (auto v = integer_in(value, at, 1000, 3'600'000, p)) out.lease_ms = *v;
    } else if (key == "max_attempts") {
      if (auto v = integer_in(value, at, 1, 100, p)) out.max_attempts = static_cast<uint32_t>(*v);
    } else if (key == "poll_ms") {
      if (auto v = integer_in(value, at, 10, 60'000, p)) out.poll_ms = *v;
    } else {
      p.add(at, "unknown key; [async] has lease_ms, max_attempts and poll_ms");
    }
  }
}

/// The server-wide keys of the top-level table (everything but `listen` and `tenants`).
bool read_server_key(std::string_view key, const toml::node& node, const std::filesystem::path& base,
                     ServerConfig& c, Problems& p) {
  const std::string at(key);
  const auto size = [&](size_t& out, uint64_t min, uint64_t max) {
    if (auto v = integer_in(node, at, min, max, p)) out = static_cast<size_t>(*v);
  };
  const auto ms = [&](uint64_t& out) {
    if (auto v = integer_in(node, at, 1, 3'600'000, p)) out = *v;
  };
  if (key == "isolation") {
    const std::optional<std::string> s = string_at(node, at, p);
    if (s && *s != "process" && *s != "inprocess") {
      p.add(at, "expected \"process\" or \"inprocess\", got \"" + *s + "\"");
    } else if (s) {
      c.isolation = *s;
    }
  } else if (key == "run_threads") {
    size(c.run_threads, 1, 1024);
  } else if (key == "queue_limit") {
    size(c.queue_limit, 0, 100'000);
  } else if (key == "max_body_bytes") {
    size(c.max_body_bytes, 1, 64ull << 20);
  } else if (key == "max_header_bytes") {
    size(c.max_header_bytes, 1024, 1 << 20);
  } else if (key == "max_target_bytes") {
    size(c.max_target_bytes, 64, 1 << 16);
  } else if (key == "max_connections") {
    size(c.max_connections, 1, 1'000'000);
  } else if (key == "max_connections_per_address") {
    size(c.max_connections_per_address, 1, 1'000'000);
  } else if (key == "audit") {
    const std::optional<std::string> sink = string_at(node, at, p);
    if (sink && (sink->empty() || sink->find('\0') != std::string::npos)) {
      p.add(at, "expected \"stdout\" or the path of the audit file, got an empty string");
    } else if (sink) {
      c.audit = *sink == "stdout" || *sink == "database" ? *sink : (base / *sink).lexically_normal().string();
    }
  } else if (key == "metrics_key_sha256") {
    read_key_hashes(node, at, c.metrics_key_hashes, p);
  } else if (key == "idle_timeout_ms") {
    ms(c.idle_timeout_ms);
  } else if (key == "header_timeout_ms") {
    ms(c.header_timeout_ms);
  } else if (key == "body_timeout_ms") {
    ms(c.body_timeout_ms);
  } else if (key == "drain_timeout_ms") {
    ms(c.drain_timeout_ms);
  } else {
    return false;
  }
  return true;
}

/// True when `inner` is `outer` or lies below it (lexically; both are normalized absolute paths).
bool within(const std::filesystem::path& inner, const std::filesystem::path& outer) {
  auto i = inner.begin();
  for (auto o = outer.begin(); o != outer.end(); ++o, ++i) {
    if (o->empty()) continue;  // a trailing separator
    if (i == inner.end() || *i != *o) return false;
  }
  return true;
}

/// A tenant's folders must not meet another tenant's: two tenants in one data directory would share a
/// store, and a skills folder inside any data directory could be written by a skill's workspace (code
/// injection into another tenant's skills).
std::string overlap_problems(const TenantConfig& t, const std::vector<TenantConfig>& all) {
  std::string out;
  const std::string at = "tenants." + t.id;
  for (const TenantConfig& other : all) {
    if (t.data_dir.empty() || other.data_dir.empty()) continue;
    if (&other != &t && (within(t.data_dir, other.data_dir) || within(other.data_dir, t.data_dir))) {
      out += at + ".data_dir: overlaps tenants." + other.id + ".data_dir; each tenant needs its own folder\n";
    }
    if (!t.skills_dir.empty() && within(t.skills_dir, other.data_dir)) {
      out += at + ".skills: inside tenants." + other.id +
             ".data_dir, where skills write; keep skill folders outside every data directory\n";
    }
  }
  return out;
}

}  // namespace

Result<Listener> parse_listener(std::string_view text) {
  Listener l;
  if (text.starts_with("unix:")) {
    l.kind = Listener::Kind::unix_socket;
    l.path = std::string(text.substr(5));
    // sun_path holds 108 bytes with the NUL.
    if (!l.path.is_absolute() || text.size() - 5 > 107 || text.find('\0') != std::string_view::npos) {
      return Error{"expected unix:/ABSOLUTE/PATH (at most 107 bytes), got \"" + std::string(text) + "\""};
    }
    return l;
  }
  const std::string expected =
      "expected IP:PORT (an IP address, never a name: 127.0.0.1:8080, [::1]:8080) "
      "or unix:/PATH, got \"" +
      std::string(text) + "\"";
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon + 1 >= text.size()) return Error{expected};
  std::string_view host = text.substr(0, colon);
  const std::string_view port = text.substr(colon + 1);
  if (host.starts_with('[') && host.ends_with(']')) {
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return Error{expected};  // an IPv6 address needs brackets
  }
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc() || end != port.data() + port.size() || value > 65535) return Error{expected};
  boost::system::error_code bad;
  const boost::asio::ip::address address = boost::asio::ip::make_address(std::string(host), bad);
  if (bad) return Error{expected};
  l.address = address.to_string();
  l.port = static_cast<uint16_t>(value);
  return l;
}

Result<ServerConfig> parse_config(std::string_view text, std::string_view source,
                                  const std::filesystem::path& base_dir) {
  Problems p{.source = std::string(source), .text = {}};
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    p.add("", "line " + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
    return Error{p.text};
  }
  ServerConfig config;
  for (auto&& [key, node] : root) {
    if (key == "listen") {
      read_listen(node, base_dir, config, p);
    } else if (key == "tenants") {
      const toml::table* tenants = node.as_table();
      if (tenants == nullptr) {
        p.add("tenants", "expected a table of tenants ([tenants.NAME]), got " + describe(node));
        continue;
      }
      for (auto&& [name, tenant] : *tenants)
        read_tenant(std::string(name.str()), tenant, base_dir, config, p);
    } else if (key == "mcp") {
      read_mcp(node, config.mcp, p);
    } else if (key == "database") {
      read_database(node, base_dir, config.database, p);
    } else if (key == "async") {
      read_async(node, config.async, p);
    } else if (!read_server_key(key.str(), node, base_dir, config, p)) {
      p.add(std::string(key.str()), "unknown key; see docs/server.md \"Configuration\" for the keys");
    }
  }
  if (p.text.empty()) {
    const std::string problems = config_problems(config);
    std::istringstream lines(problems);
    for (std::string line; std::getline(lines, line);) p.add("", line);
  }
  if (!p.text.empty()) return Error{p.text};
  return config;
}

Result<ServerConfig> load_config(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path.string() + ": cannot read the config file"};
  std::string text(kMaxConfigBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxConfigBytes)
    return Error{path.string() + ": larger than 1 MiB; is it the config file?"};
  const std::filesystem::path base = std::filesystem::absolute(path).parent_path();
  Result<ServerConfig> config = parse_config(text, path.string(), base);
  if (config) config->source = std::filesystem::absolute(path);
  return config;
}

std::string config_problems(const ServerConfig& config) {
  std::string out;
  if (config.listeners.empty())
    out += "listen: no address to listen on; e.g. listen = [\"127.0.0.1:8080\"]\n";
  if (config.tenants.empty()) out += "tenants: no tenant; add a [tenants.NAME] table\n";
  if (!config.database.url.empty() && !pg::is_postgres_url(config.database.url)) {
    out += "database.url: expected a postgres:// or postgresql:// URL, got \"" +
           pg::redact_url(config.database.url) + "\"\n";
  }
  if (config.audit == "database" && config.database.url.empty())
    out += "audit: \"database\" stores the audit in the database; give database.url too\n";
  if (config.database.url.empty() && !config.database.vault_key_file.empty())
    out += "database.vault_key_file: the vault is in the database; give database.url too\n";
  if (!config.database.url.empty() && config.database.max_connections <= config.run_threads) {
    out += "database.max_connections: " + std::to_string(config.database.max_connections) +
           " is not more than run_threads (" + std::to_string(config.run_threads) +
           "): a run of an OpenHuman bundle holds a connection for its database's lease and needs another "
           "for its store; give at least run_threads + 1 (2 x run_threads leaves room for every run)\n";
  }
  std::set<std::string> keyless_ok;  // tenants served by an auth = "none" listener may have no key
  for (size_t i = 0; i < config.listeners.size(); ++i) {
    const Listener& l = config.listeners[i];
    if (!l.auth_none) continue;
    const std::string at = "listen[" + std::to_string(i) + "]";
    boost::system::error_code bad;
    const bool loopback =
        l.kind == Listener::Kind::tcp && boost::asio::ip::make_address(l.address, bad).is_loopback() && !bad;
    if (!loopback) {
      out += at +
             ".auth: \"none\" (no authentication) is only allowed on a loopback address (127.0.0.1, "
             "[::1]); this listener is " +
             (l.kind == Listener::Kind::tcp ? l.address : "unix:" + l.path.string()) +
             ". Bind it to 127.0.0.1, or remove auth = \"none\"\n";
    }
    bool known = false;
    for (const TenantConfig& t : config.tenants) known = known || t.id == l.tenant;
    if (!known)
      out += at + ".tenant: no tenant \"" + l.tenant + "\"; add a [tenants." + l.tenant + "] table\n";
    keyless_ok.insert(l.tenant);
  }
  std::map<std::string, std::string> keys;
  for (const KeyHash& h : config.metrics_key_hashes) keys.emplace(key_hash_hex(h), "");
  for (const TenantConfig& t : config.tenants) {
    const std::string at = "tenants." + t.id;
    if (t.key_hashes.empty() && !keyless_ok.contains(t.id))
      out += at + ".key_sha256: no key; a tenant needs at least one (or an auth = \"none\" listener)\n";
    out += overlap_problems(t, config.tenants);
    for (const KeyHash& h : t.key_hashes) {
      const auto [owner, unique] = keys.emplace(key_hash_hex(h), t.id);
      if (!unique && owner->second.empty()) {
        out += at + ".key_sha256: also in metrics_key_sha256; the metrics key must be the operator's own\n";
      } else if (!unique && owner->second != t.id) {
        out += at + ".key_sha256: a key of tenants." + owner->second + " too; a key must name one tenant\n";
      }
    }
  }
  return out;
}

}  // namespace skillbox::server
