// cli/serve_command.cpp — `skillbox serve`: the sandbox as an HTTP service (docs/server.md).
//
// Two ways to start it: with a config file (`--config FILE`: listeners, tenants, keys, ceilings), or
// with a skills folder and nothing else, which serves that folder to one tenant, "default", on
// 127.0.0.1 with a fresh API key printed once. The server itself is server/server.h; this file only
// turns the command line into a ServerConfig and prints where to reach it.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/file_read.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/output.h"
#include "pg/url.h"
#include "server/server.h"

namespace skillbox::cli {
namespace {

struct ServeOptions {
  std::string skills_dir;
  std::optional<std::string> config;
  std::vector<std::string> listen;
  std::optional<std::string> api_key_file;
  std::string data_dir;
  std::string isolation = "process";
  bool isolation_given = false;
  std::string database;        // --database or $SKILLBOX_DATABASE_URL; replaces the config's [database] url
  std::string vault_key_file;  // --vault-key-file or $SKILLBOX_VAULT_KEY_FILE
};

constexpr const char* kDefaultListen = "127.0.0.1:8080";

/// Every line of `text` as a message (a config error holds one line per problem), then where to read
/// more, as main.cpp reports a bad command line. Returns exit code 2.
int usage(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  emit(stderr, message("", text) + "Run 'skillbox serve --help' for usage.\n");
  return kExitUsage;
}

/// The key of `--api-key-file`: the file's text without surrounding whitespace.
Result<std::string> read_key_file(const std::string& path) {
  auto text = base::read_file(path.c_str(), {.max_bytes = 4096});
  if (!text) return Error{"--api-key-file: cannot read \"" + path + "\""};
  std::string key = std::move(*text);
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!key.empty() && space(key.back())) key.pop_back();
  size_t start = 0;
  while (start < key.size() && space(key[start])) ++start;
  key.erase(0, start);
  if (key.size() < server::kMinApiKeyBytes || key.size() > server::kMaxApiKeyBytes) {
    return Error{"--api-key-file: the key must be " + std::to_string(server::kMinApiKeyBytes) + " to " +
                 std::to_string(server::kMaxApiKeyBytes) + " characters, got " + std::to_string(key.size())};
  }
  for (const char c : key) {
    if (c <= ' ' || c == 0x7f)
      return Error{"--api-key-file: the key must be printable characters without spaces"};
  }
  return key;
}

/// The config of the no-config mode: one tenant, "default", serving `o.skills_dir`.
Result<server::ServerConfig> folder_config(const ServeOptions& o, std::string& printed_key) {
  std::error_code ec;
  if (!std::filesystem::is_directory(o.skills_dir, ec)) {
    return Error{"\"" + o.skills_dir +
                 "\" is not a folder; give a folder of skill folders, e.g. examples/skills"};
  }
  std::string key;
  if (o.api_key_file) {
    Result<std::string> read = read_key_file(*o.api_key_file);
    if (!read) return read.error();
    key = std::move(*read);
  } else {
    key = server::generate_api_key();
    printed_key = key;
  }
  server::TenantConfig tenant;
  tenant.id = "default";
  tenant.key_hashes.push_back(server::hash_api_key(key));
  tenant.skills_dir = std::filesystem::absolute(o.skills_dir).lexically_normal();
  // One local user, who may run any skill of the folder: uploading one, or sending one with a request,
  // gives nothing more (the sandbox is the same), so both are on (docs/server.md "Uploading a skill").
  tenant.code.allow_upload = true;
  tenant.code.allow_inline = true;
  HostOptions host;
  host.data_dir = o.data_dir;  // as `skillbox run`: --data-dir, else $SKILLBOX_HOME, ...
  tenant.data_dir = resolve_data_dir(host);
  if (tenant.data_dir.empty()) return Error{"no data directory: set --data-dir, $SKILLBOX_HOME or $HOME"};
  server::ServerConfig config;
  config.isolation = o.isolation;
  config.tenants.push_back(std::move(tenant));
  return config;
}

int serve(const ServeOptions& o) {
  std::string printed_key;
  Result<server::ServerConfig> config = Error{""};
  if (o.config) {
    if (!o.skills_dir.empty() || o.api_key_file || !o.data_dir.empty() || o.isolation_given) {
      return usage(
          "--config names the skills, keys, data directories and isolation; leave out SKILLS_DIR, "
          "--api-key-file, --data-dir and --isolation");
    }
    config = server::load_config(*o.config);
  } else if (o.skills_dir.empty()) {
    return usage("give a folder of skills (skillbox serve examples/skills) or --config FILE");
  } else {
    config = folder_config(o, printed_key);
  }
  if (!config) return usage(config.error().message);
  if (!o.database.empty()) {
    if (!pg::is_postgres_url(o.database)) {
      return usage(
          "--database: expected a postgres:// or postgresql:// URL (postgres://USER:PASSWORD@HOST:PORT/DB), "
          "got \"" +
          pg::redact_url(o.database) + "\"");
    }
    config->database.url = o.database;
  }
  if (!o.vault_key_file.empty()) {
    if (config->database.url.empty())
      return usage("--vault-key-file: the vault is in the database; give --database too");
    config->database.vault_key_file = std::filesystem::absolute(o.vault_key_file);
  } else if (const char* env = std::getenv("SKILLBOX_VAULT_KEY_FILE");
             env != nullptr && *env != '\0' && !config->database.url.empty()) {
    // Only with a database: the variable may be set for `skillbox db credentials import` in a shell
    // that also starts a plain server.
    config->database.vault_key_file = std::filesystem::absolute(env);
  }
  if (!o.listen.empty() || config->listeners.empty()) {
    config->listeners.clear();
    for (const std::string& text : o.listen.empty() ? std::vector<std::string>{kDefaultListen} : o.listen) {
      Result<server::Listener> l = server::parse_listener(text);
      if (!l) return usage("--listen: " + l.error().message);
      config->listeners.push_back(std::move(*l));
    }
  }
  Result<std::unique_ptr<server::Server>> server = server::Server::start(std::move(*config));
  if (!server) return usage(server.error().message);
  std::string lines;
  for (const std::string& url : (*server)->urls()) lines += "url: " + url + "\n";
  if (!printed_key.empty()) lines += "key: " + printed_key + "\n";
  emit(stdout, lines);  // flushed: a script waiting for these lines sees them at once
  (*server)->run();
  say("", "serve: stopped");
  return 0;
}

}  // namespace

void add_serve_command(CLI::App& app, CommandStatus& status) {
  auto o = std::make_shared<ServeOptions>();
  CLI::App* cmd =
      app.add_subcommand("serve", "Serve skills over HTTP to tenants holding API keys (man skillbox-serve).");
  cmd->add_option("SKILLS_DIR", o->skills_dir,
                  "A folder of skill folders, served to one tenant with a fresh API key (without --config)")
      ->type_name("");
  cmd->add_option("--config", o->config,
                  "TOML file with listeners, tenants (hashed keys, skills, data, ceilings) and bounds")
      ->type_name("FILE");
  cmd->add_option("--listen", o->listen,
                  "Address to listen on, IP:PORT or unix:/PATH; repeatable (default 127.0.0.1:8080; port 0 "
                  "picks a free one; replaces the config's listen)")
      ->type_name("ADDR");
  cmd->add_option(
         "--api-key-file", o->api_key_file,
         "Without --config: read the API key from FILE instead of generating one (replicas share it)")
      ->type_name("FILE");
  cmd->add_option("--database", o->database,
                  "Keep the tenants' store, workspaces, skill bindings and bundle databases in PostgreSQL (a "
                  "postgres:// URL; "
                  "run 'skillbox db migrate' first); replaces the config's [database] url")
      ->envname("SKILLBOX_DATABASE_URL")
      ->type_name("URL");
  cmd->add_option(
         "--vault-key-file", o->vault_key_file,
         "With --database: open the bundles' credentials stored with 'skillbox db credentials import' "
         "with this key (64 hex digits, mode 0600; default $SKILLBOX_VAULT_KEY_FILE)")
      ->type_name("FILE");
  add_data_dir_option(*cmd, o->data_dir);
  add_isolation_option(*cmd, o->isolation);
  cmd->footer(
      "Prints 'url: URL' for each listener and, for a generated key, 'key: KEY' on stdout, then serves "
      "until\n"
      "SIGINT or SIGTERM, drains (in-flight runs finish) and exits 0. One log line per request on stderr.\n"
      "With --database, GET /readyz answers 503 (and a log line says why) while the database cannot be "
      "used.\n"
      "Try: curl -H \"Authorization: Bearer $KEY\" $URL/v1/skills\n"
      "Exit codes: 0 stopped by a signal, 2 bad command line or config (the message names the key).");
  const CLI::Option* isolation = cmd->get_option("--isolation");
  cmd->callback([o, isolation, &status] {
    o->isolation_given = isolation->count() > 0;
    status.exit_code = serve(*o);
  });
}

}  // namespace skillbox::cli
