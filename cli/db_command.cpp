// cli/db_command.cpp — `skillbox db migrate --database URL`: bring a PostgreSQL database to the schema
// this build knows; `skillbox db credentials import|list|rm`: bundles' credentials in the database, sealed
// (docs/scale-out.md "Schema and migrations" and "Credentials on PostgreSQL", docs/cli.md "skillbox db").
//
// Safe to run from many replicas at once: pg::migrate() applies each migration once, under an advisory
// lock. A database with a newer schema is refused and left as it is.
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "base/skill_id.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/output.h"
#include "pg/connection.h"
#include "pg/credential_vault.h"
#include "pg/schema.h"
#include "pg/url.h"

namespace skillbox::cli {
namespace {

struct DbOptions {
  std::string database;
  // db credentials
  std::string tenant;
  std::string vault_key_file;
  std::string file;   // import: the credentials document
  std::string skill;  // rm
};

/// A connection to `o.database`, or the exit code after saying what was wrong (`command` names it).
std::optional<pg::Connection> connect(const DbOptions& o, const std::string& command, int& exit_code) {
  if (o.database.empty()) {
    say("",
        command + ": pass --database postgres://USER:PASSWORD@HOST:PORT/DB (or set SKILLBOX_DATABASE_URL)");
    exit_code = kExitUsage;
    return std::nullopt;
  }
  if (!pg::is_postgres_url(o.database)) {
    say("", command + ": --database must be a postgres:// or postgresql:// URL (got " +
                pg::redact_url(o.database) + ")");
    exit_code = kExitUsage;
    return std::nullopt;
  }
  auto conn = pg::Connection::open(o.database, pg::kDefaultConnectTimeout, std::chrono::milliseconds(5000));
  if (!conn) {
    say("", command + ": " + conn.error().message);
    exit_code = kExitInternal;
    return std::nullopt;
  }
  if (auto schema = pg::check_schema(*conn); !schema) {
    say("", command + ": " + schema.error().message);
    exit_code = kExitInternal;
    return std::nullopt;
  }
  return std::move(*conn);
}

/// `db credentials import FILE`: seals each skill's entry of a credentials document into the tenant's rows.
int import_credentials(const DbOptions& o) {
  const std::string command = "db credentials import";
  if (!base::is_valid_skill_id(o.tenant)) {
    say("", command + ": --tenant must be a tenant name (a-z, 0-9, '.', '_', '-'; 1 to 64)");
    return kExitUsage;
  }
  if (o.vault_key_file.empty()) {
    say("",
        command + ": pass --vault-key-file FILE (or set SKILLBOX_VAULT_KEY_FILE): the key that seals them");
    return kExitUsage;
  }
  Result<std::map<std::string, SkillCredentials>> doc = load_credentials_file(o.file);
  if (!doc) {
    say("", command + ": " + o.file + ": " + doc.error().message);
    return kExitUsage;
  }
  Result<std::shared_ptr<const pg::VaultKey>> key = pg::VaultKey::load(o.vault_key_file);
  if (!key) {
    say("", command + ": " + key.error().message);
    return kExitUsage;
  }
  int exit_code = 0;
  std::optional<pg::Connection> conn = connect(o, command, exit_code);
  if (!conn) return exit_code;
  std::string lines;
  for (const auto& [skill, credentials] : *doc) {
    if (auto put = pg::put_credentials(*conn, **key, o.tenant, skill, credentials); !put) {
      emit(stdout, lines);
      say("", command + ": " + skill + ": " + put.error().message);
      return kExitInternal;
    }
    lines += "stored the credentials of " + skill + " for tenant " + o.tenant + " (vault key " +
             (*key)->id() + ")\n";
  }
  emit(stdout, lines);
  return 0;
}

/// `db credentials list`: the tenant's skills with credentials, and the key that sealed each.
int list_credentials(const DbOptions& o) {
  int exit_code = 0;
  std::optional<pg::Connection> conn = connect(o, "db credentials list", exit_code);
  if (!conn) return exit_code;
  auto listed = pg::list_credentials(*conn, o.tenant);
  if (!listed) {
    say("", "db credentials list: " + listed.error().message);
    return kExitInternal;
  }
  std::string lines;
  for (const auto& [skill, key_id] : *listed) lines += skill + "\tvault key " + key_id + "\n";
  emit(stdout, lines);
  return 0;
}

/// `db credentials rm SKILL`.
int remove_credentials(const DbOptions& o) {
  int exit_code = 0;
  std::optional<pg::Connection> conn = connect(o, "db credentials rm", exit_code);
  if (!conn) return exit_code;
  auto removed = pg::remove_credentials(*conn, o.tenant, o.skill);
  if (!removed) {
    say("", "db credentials rm: " + removed.error().message);
    return kExitInternal;
  }
  if (!*removed) {
    say("", "db credentials rm: tenant " + o.tenant + " has no credentials for " + o.skill);
    return 1;
  }
  emit(stdout, "removed the credentials of " + o.skill + " for tenant " + o.tenant + "\n");
  return 0;
}

int migrate_database(const DbOptions& o) {
  if (o.database.empty()) {
    say("",
        "db migrate: pass --database postgres://USER:PASSWORD@HOST:PORT/DB (or set SKILLBOX_DATABASE_URL)");
    return kExitUsage;
  }
  if (!pg::is_postgres_url(o.database)) {
    say("", "db migrate: --database must be a postgres:// or postgresql:// URL (got " +
                pg::redact_url(o.database) + ")");
    return kExitUsage;
  }
  auto conn = pg::Connection::open(o.database, pg::kDefaultConnectTimeout, std::chrono::milliseconds(5000));
  if (!conn) {
    say("", "db migrate: " + conn.error().message);
    return kExitInternal;
  }
  auto report = pg::migrate(*conn);
  if (!report) {
    say("", "db migrate: " + report.error().message);
    return kExitInternal;
  }
  const std::string where = pg::redact_url(o.database);
  if (report->applied.empty()) {
    emit(stdout, where + ": up to date (schema version " + std::to_string(report->to) + ")\n");
    return 0;
  }
  for (int version : report->applied)
    for (const pg::Migration& m : pg::migrations())
      if (m.version == version)
        emit(stdout, "applied migration " + std::to_string(version) + ": " + std::string(m.name) + "\n");
  emit(stdout, where + ": schema version " + std::to_string(report->from) + " -> " +
                   std::to_string(report->to) + "\n");
  return 0;
}

}  // namespace

void add_db_command(CLI::App& app, CommandStatus& status) {
  auto o = std::make_shared<DbOptions>();
  CLI::App* db = app.add_subcommand(
      "db", "Manage the PostgreSQL database of `skillbox serve` replicas (scale-out.md in the guides)");
  db->require_subcommand(1);
  CLI::App* migrate = db->add_subcommand(
      "migrate",
      "Apply the schema migrations this skillbox knows to a PostgreSQL database (safe to run twice, "
      "or from many replicas at once)");
  migrate->add_option("--database", o->database, "The database, as a postgres:// URL")
      ->envname("SKILLBOX_DATABASE_URL")
      ->type_name("URL");
  migrate->footer(
      "A database whose schema is newer than this skillbox is refused and left unchanged.\n"
      "Exit codes: 0 migrated or up to date, 2 no or bad --database, 70 the database cannot be reached, "
      "is newer, or a migration failed (it was rolled back).");
  migrate->callback([o, &status] { status.exit_code = migrate_database(*o); });

  CLI::App* creds = db->add_subcommand(
      "credentials",
      "OpenHuman bundles' credentials in the database, sealed with the operator's vault key (what serve "
      "--database injects at egress)");
  creds->require_subcommand(1);
  const auto common = [&](CLI::App* cmd) {
    cmd->add_option("--database", o->database, "The database, as a postgres:// URL")
        ->envname("SKILLBOX_DATABASE_URL")
        ->type_name("URL");
    cmd->add_option("--tenant", o->tenant, "The tenant whose credentials these are (serve's tenant name)")
        ->required()
        ->type_name("NAME");
  };
  CLI::App* importer = creds->add_subcommand(
      "import", "Seal and store each skill's credentials of a credentials file (the --credentials document)");
  common(importer);
  importer
      ->add_option("FILE", o->file, "The credentials document: {\"<skill id>\": {\"oauth\"|\"auth\": ...}}")
      ->required()
      ->type_name("");
  importer->add_option("--vault-key-file", o->vault_key_file, "The vault key: 64 hex digits, mode 0600")
      ->envname("SKILLBOX_VAULT_KEY_FILE")
      ->type_name("FILE");
  importer->footer("Exit codes: 0 stored, 2 bad command line, file or key, 70 the database failed.");
  importer->callback([o, &status] { status.exit_code = import_credentials(*o); });
  CLI::App* list =
      creds->add_subcommand("list", "The tenant's skills that have credentials (never a secret)");
  common(list);
  list->callback([o, &status] { status.exit_code = list_credentials(*o); });
  CLI::App* rm = creds->add_subcommand("rm", "Remove a skill's credentials");
  common(rm);
  rm->add_option("SKILL", o->skill, "The skill id")->required()->type_name("");
  rm->footer("Exit codes: 0 removed, 1 the skill had none, 2 bad command line, 70 the database failed.");
  rm->callback([o, &status] { status.exit_code = remove_credentials(*o); });
}

}  // namespace skillbox::cli
