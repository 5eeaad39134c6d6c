// server/config.h — what `skillbox serve` serves: listeners, tenants, their keys, skills, data and
// ceilings, and the server's own bounds. Read from a TOML file (`--config FILE`, docs/server.md
// "Configuration") or built by the command line for the no-config mode.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "server/api_key.h"
#include "server/quota.h"
#include "skillbox/credentials.h"
#include "skillbox/policy.h"
#include "skillbox/result.h"

namespace skillbox::server {

/// One address the server listens on.
struct Listener {
  enum class Kind : uint8_t { tcp, unix_socket };
  Kind kind = Kind::tcp;
  std::string address;         // tcp: an IPv4 or IPv6 literal (never a name: nothing is resolved)
  uint16_t port = 0;           // tcp: 0 picks a free port
  std::filesystem::path path;  // unix_socket: the socket file (made 0600)
  /// `auth = "none"` (docs/server.md "A listener without authentication"): requests need no key and
  /// are all `tenant`'s; only /mcp (and the probes) is served. Refused unless the address is a
  /// loopback one; a peer that is not loopback is disconnected at accept.
  bool auth_none = false;
  std::string tenant;
  /// TLS (tcp only): the certificate chain and the private key, PEM files (server/tls.h). Both empty: plain
  /// HTTP. The key file must not be readable by every user.
  std::filesystem::path tls_cert;
  std::filesystem::path tls_key;
};

/// Parses "IP:PORT" ("127.0.0.1:8080", "[::1]:8080") or "unix:/absolute/path". Errors say what is
/// expected.
[[nodiscard]] Result<Listener> parse_listener(std::string_view text);

/// What code a tenant may send (`[tenants.NAME.code]`, docs/server.md "Uploading a skill").
struct CodeConfig {
  /// PUT /v1/skills/{id}: the tenant may upload skills (into its data directory).
  bool allow_upload = false;
  /// POST /v1/run: the tenant may run code it sends with the request.
  bool allow_inline = false;
  /// Files in one upload or inline skill, and their total bytes (the body's max_body_bytes applies too).
  size_t max_files = 1000;
  uint64_t max_bytes = uint64_t{8} << 20;
  /// Versions of an uploaded skill kept (the current one included); older ones are removed.
  size_t keep_versions = 5;
};

/// One tenant: whoever holds one of its keys sees its skills and its data, and nothing else.
struct TenantConfig {
  /// The tenant's name (the skill-id rule: base/skill_id.h), in log lines and the audit.
  std::string id;
  /// SHA-256 of each accepted API key (several: rotation).
  std::vector<KeyHash> key_hashes;
  /// A folder of skill folders: GET /v1/skills/ID is `skills_dir/ID`.
  std::filesystem::path skills_dir;
  /// The tenant's data directory (store, workspaces, bindings), distinct from every other tenant's.
  std::filesystem::path data_dir;
  /// Upper bounds on every run's limits (TenantContext::ceilings); unset fields bound nothing more.
  LimitOverrides ceilings;
  /// Requests of this tenant on a run thread at once; more wait in the tenant's queue.
  size_t max_concurrent_runs = 4;
  /// Requests of this tenant waiting for a run thread; beyond it, 429 with Retry-After.
  size_t max_queued_runs = 8;
  /// The tenant's share of the run threads when tenants compete (server/run_queue.h): weight 2 starts
  /// two requests for each one of a tenant of weight 1.
  size_t weight = 1;
  CodeConfig code;
  /// `[tenants.NAME.env]`: the values `env.get` may return (TenantContext::env), still only for the
  /// names a skill's manifest lists in permissions.env. Nothing comes from the server's environment.
  std::map<std::string, std::string> env;
  /// `[tenants.NAME.credentials]`: OpenHuman bundles' credentials by skill id, the document of
  /// `skillbox call --credentials` (skillbox/credentials.h) written as TOML. Secrets: the http
  /// capability puts them into requests to their bound hosts; a skill sees placeholders.
  std::map<std::string, SkillCredentials> credentials;
  /// `[tenants.NAME.origin_map]`: FROM origin = TO origin, as `--map-origin FROM=TO`
  /// (HostOptions::origin_map); a loopback TO is trusted, as the CLI trusts it.
  std::vector<std::pair<std::string, std::string>> origin_map;
  /// runs_per_minute and cpu_seconds_per_minute (server/quota.h).
  QuotaConfig quota;
};

/// `[database]`, or `serve --database URL`: PostgreSQL as the system of record (docs/scale-out.md).
/// Without a URL every tenant's state is in its data directory.
struct DatabaseConfig {
  /// A postgres:// or postgresql:// URL (libpq's URI syntax); empty: no database.
  std::string url;
  /// Most connections this replica opens to it at once (pg::PoolOptions::max_connections).
  size_t max_connections = 8;
  /// The operator's vault key (pg/credential_vault.h): bundles' credentials stored with `skillbox db
  /// credentials import` are opened with it. Empty: only the config's credentials are served.
  std::filesystem::path vault_key_file;
};

/// The MCP endpoint `/mcp` (docs/mcp.md "Over HTTP").
struct McpConfig {
  /// Origin header values accepted (DNS rebinding defence, MCP "Streamable HTTP" security warning): a
  /// request with an Origin not listed gets 403; one without Origin is served. "scheme://host:*" stands
  /// for that scheme and host with any port, or none. Default: the loopback origins.
  std::vector<std::string> allowed_origins = {"http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"};
  /// Sessions a tenant may hold open; initialize beyond it gets 429 (end one with DELETE, or let it expire).
  size_t max_sessions_per_tenant = 32;
  /// A session nobody used for this long ends (its calls cancelled); its id then gets 404.
  uint64_t session_idle_timeout_ms = 30 * 60 * 1000;
  /// `tool_names = "bare"`: a bundle's tools are served under their own names, not
  /// `<skill-id>__<tool>` (for clients that call fixed names, such as the conformance suite); a name
  /// that two skills of a tenant give is served once, from the first skill in id order, with a log line.
  bool bare_tool_names = false;
};

/// `[async]`: async runs (POST /v1/skills/{id}/run?async=true; docs/scale-out.md "Async runs").
struct AsyncConfig {
  /// How long a claim holds a run; the claimer renews it every third of this while the run goes on. A
  /// replica that stops renewing (killed, cut off) loses its runs to another replica after this long.
  uint64_t lease_ms = 30'000;
  /// Claims of a run (the first included) before it ends as `dead`: a crash or an internal error
  /// retries it (after 1 s, 2 s, 4 s, ...), and so does a replica that died holding it.
  uint32_t max_attempts = 3;
  /// How often an idle replica looks for runs other replicas queued (its own are seen at once).
  uint64_t poll_ms = 200;
};

/// Everything the server needs. Defaults are those of docs/server.md.
struct ServerConfig {
  /// The file it was read from (load_config), which SIGHUP reads again; empty when the command line
  /// built it (nothing to reload).
  std::filesystem::path source;
  std::vector<Listener> listeners;
  std::vector<TenantConfig> tenants;
  /// "process" (a sandboxed worker per run, the default, as `skillbox run`) or "inprocess".
  std::string isolation = "process";
  /// Threads running skills at once, server-wide (each waits on one run).
  size_t run_threads = 4;
  /// Requests that may wait for a run thread, server-wide (all tenants' queues); beyond it, 503.
  size_t queue_limit = 64;
  /// SHA-256 of each key that may read GET /metrics (the operator's, never a tenant's). Empty: /metrics
  /// is off (404), since its series name every tenant.
  std::vector<KeyHash> metrics_key_hashes;
  /// Largest request body; beyond it, 413. 1 MiB: a run's input is a JSON value, not a file upload.
  size_t max_body_bytes = size_t{1024} * 1024;
  /// Largest request line plus headers; beyond it, 431. 16 KiB: room for any real client's headers.
  size_t max_header_bytes = size_t{16} * 1024;
  /// Longest request target (path and query); beyond it, 414.
  size_t max_target_bytes = 4096;
  /// Time a connection may wait for the first byte of a request (after it opens, or after the previous
  /// response), and time a client has to read a response. Bounds idle keep-alive connections.
  uint64_t idle_timeout_ms = 30'000;
  /// Time a client has to send a request line and headers, counted from their first byte (slowloris:
  /// headers sent a byte at a time hold the connection for this long at most, however steady they come).
  uint64_t header_timeout_ms = 10'000;
  /// Time a client has to send a request body, counted from the end of the headers (slow POST).
  uint64_t body_timeout_ms = 30'000;
  /// After SIGTERM/SIGINT: how long in-flight runs may finish before they are cancelled.
  uint64_t drain_timeout_ms = 30'000;
  /// Where the request audit goes (server/audit.h): "stdout", "database" (table audit_log of the
  /// database; needs database.url), or an absolute file path (appended, made 0600, opened again on
  /// SIGHUP for rotation). Empty: no audit.
  std::string audit;
  /// Connections open at once; a connection beyond it is closed at once.
  size_t max_connections = 1024;
  /// TCP connections open at once from one client IP address (UNIX-socket clients are not counted: the
  /// socket file's mode admits them); a connection beyond it is closed at once. 64: more than any
  /// browser or client pool opens, a sixteenth of max_connections, so one address cannot take them all.
  size_t max_connections_per_address = 64;
  McpConfig mcp;
  /// Where the tenants' store, workspaces, skill bindings, bundle databases and (with a vault key)
  /// credentials live: PostgreSQL when `database.url` is set (uploads stay in the data directory for
  /// now; the audit goes there with audit = "database"). Fixed at start.
  DatabaseConfig database;
  AsyncConfig async;
};

/// Parses TOML `text` (docs/server.md "Configuration"). Relative paths are taken from `base_dir`.
/// Every problem is reported, one per line, as "SOURCE: KEY.PATH: what is wrong"; unknown keys are
/// problems too (a misspelt key must not silently fall back to a default).
[[nodiscard]] Result<ServerConfig> parse_config(std::string_view text, std::string_view source,
                                                const std::filesystem::path& base_dir);

/// Reads and parses the file `path` (at most 1 MiB).
[[nodiscard]] Result<ServerConfig> load_config(const std::filesystem::path& path);

/// Problems of a config however it was built (no listener, no tenant, two tenants sharing a data
/// directory or a key, ...), one per line; empty when it can be served.
[[nodiscard]] std::string config_problems(const ServerConfig& config);

}  // namespace skillbox::server
