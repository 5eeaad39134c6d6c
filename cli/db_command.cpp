// cli/db_command.cpp — `skillbox db migrate --database URL`: bring a PostgreSQL database to the schema
// this build knows (docs/scale-out.md "Schema and migrations", docs/cli.md "skillbox db").
//
// Safe to run from many replicas at once: pg::migrate() applies each migration once, under an advisory
// lock. A database with a newer schema is refused and left as it is.
#include <chrono>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/output.h"
#include "pg/connection.h"
#include "pg/schema.h"
#include "pg/url.h"

namespace skillbox::cli {
namespace {

struct DbOptions {
  std::string database;
};

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
}

}  // namespace skillbox::cli
