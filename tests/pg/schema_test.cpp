// pg/schema.h: migrations through `skillbox db migrate` as an operator runs it, and the check at open,
// each on a scratch database of the test cluster.
#include "pg/schema.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "pg/connection.h"
#include "support/cli_exec.h"
#include "support/postgres_test_db.h"

namespace skillbox::pg {
namespace {

using skillbox::testing::run_cli;
using skillbox::testing::ScratchDatabase;

Connection connect(const std::string& url) {
  auto c = Connection::open(url, std::chrono::seconds(10), std::chrono::milliseconds(5000));
  if (!c) throw std::runtime_error(c.error().message);
  return std::move(*c);
}

std::vector<std::string> applied_versions(const std::string& url) {
  auto c = connect(url);
  auto rows = c.exec("reading", "SELECT version FROM schema_migrations ORDER BY version");
  std::vector<std::string> out;
  if (!rows) return out;
  for (auto& r : rows->rows) out.push_back(r.at(0).value_or(""));
  return out;
}

std::vector<std::string> all_versions() {
  std::vector<std::string> out;
  for (const Migration& m : migrations()) out.push_back(std::to_string(m.version));
  return out;
}

TEST(PostgresSchema, MigrateAppliesEveryMigrationAndASecondRunIsANoOp) {
  ScratchDatabase db;
  ASSERT_FALSE(db.url().empty());
  auto first = run_cli({"db", "migrate", "--database", db.url()});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("applied migration 1: store"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("schema version 0 -> " + std::to_string(known_schema_version())),
            std::string::npos)
      << first.out;
  EXPECT_EQ(applied_versions(db.url()), all_versions());

  auto second = run_cli({"db", "migrate", "--database", db.url()});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.out.find("up to date (schema version " + std::to_string(known_schema_version()) + ")"),
            std::string::npos)
      << second.out;
  EXPECT_EQ(second.out.find("applied"), std::string::npos) << second.out;
  EXPECT_EQ(applied_versions(db.url()), all_versions()) << "nothing applied twice";
}

TEST(PostgresSchema, OutputNeverShowsThePassword) {
  ScratchDatabase db;
  ASSERT_FALSE(db.url().empty());
  const std::string url = db.url();
  const size_t at = url.find('@');
  const std::string password = url.substr(url.find(':', 11) + 1, at - url.find(':', 11) - 1);
  ASSERT_GE(password.size(), 8U) << "the test cluster has a password: " << url;
  auto r = run_cli({"db", "migrate", "--database", url});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find(password), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("skillbox:***@127.0.0.1"), std::string::npos) << r.out;
  // The URL from the environment instead of the command line (where `ps` shows it).
  skillbox::testing::CliOptions from_env;
  from_env.env = {"SKILLBOX_DATABASE_URL=" + url};
  auto env = run_cli({"db", "migrate"}, from_env);
  EXPECT_EQ(env.exit_code, 0) << env.err;
  EXPECT_NE(env.out.find("up to date"), std::string::npos) << env.out;
}

TEST(PostgresSchema, ConcurrentMigratesFromManyProcessesApplyEachMigrationOnce) {
  ScratchDatabase db;
  ASSERT_FALSE(db.url().empty());
  constexpr int kProcesses = 4;
  std::vector<skillbox::testing::CliExec> results(kProcesses);
  std::vector<std::thread> threads;
  for (int i = 0; i < kProcesses; ++i)
    threads.emplace_back([&, i] { results[i] = run_cli({"db", "migrate", "--database", db.url()}); });
  for (auto& t : threads) t.join();
  int applied = 0;
  for (const auto& r : results) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (r.out.find("applied migration 1") != std::string::npos) ++applied;
  }
  EXPECT_EQ(applied, 1) << "exactly one process applied the migrations; the others found them done";
  EXPECT_EQ(applied_versions(db.url()), all_versions());
}

TEST(PostgresSchema, ANewerSchemaIsRefusedWithWhatToDoAndLeftUnchanged) {
  ScratchDatabase db;
  ASSERT_FALSE(db.url().empty());
  ASSERT_EQ(run_cli({"db", "migrate", "--database", db.url()}).exit_code, 0);
  const int newer = known_schema_version() + 1;
  {
    auto c = connect(db.url());
    ASSERT_TRUE(c.exec("faking a newer skillbox",
                       "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                       {std::to_string(newer), "from the future"}));
  }
  auto r = run_cli({"db", "migrate", "--database", db.url()});
  EXPECT_EQ(r.exit_code, 70);
  EXPECT_NE(r.err.find("schema version " + std::to_string(newer) + ", newer than this skillbox knows (" +
                       std::to_string(known_schema_version()) + ")"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("Run that version (or newer) of skillbox"), std::string::npos) << r.err;
  auto opened = open_database(db.url());
  ASSERT_FALSE(opened.ok()) << "the check at open refuses it too";
  EXPECT_NE(opened.error().message.find("newer than this skillbox knows"), std::string::npos)
      << opened.error().message;
  auto versions = applied_versions(db.url());
  ASSERT_FALSE(versions.empty());
  EXPECT_EQ(versions.back(), std::to_string(newer)) << "left as it was";
  EXPECT_EQ(versions.size(), all_versions().size() + 1);
}

TEST(PostgresSchema, AnUnmigratedDatabaseIsRefusedAtOpenWithTheCommandToRun) {
  ScratchDatabase db;
  ASSERT_FALSE(db.url().empty());
  auto opened = open_database(db.url());
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(
      opened.error().message.find("has no skillbox schema yet: run `skillbox db migrate --database URL`"),
      std::string::npos)
      << opened.error().message;
  ASSERT_EQ(run_cli({"db", "migrate", "--database", db.url()}).exit_code, 0);
  EXPECT_TRUE(open_database(db.url()).ok());
}

TEST(PgSchemaCli, BadDatabaseArgumentsAreRefused) {
  skillbox::testing::CliOptions no_env;
  no_env.env = {"SKILLBOX_DATABASE_URL="};
  auto none = run_cli({"db", "migrate"}, no_env);
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("pass --database postgres://"), std::string::npos) << none.err;
  auto keyword = run_cli({"db", "migrate", "--database", "host=localhost password=hunter2"});
  EXPECT_EQ(keyword.exit_code, 2);
  EXPECT_NE(keyword.err.find("must be a postgres:// or postgresql:// URL"), std::string::npos) << keyword.err;
  EXPECT_EQ(keyword.err.find("hunter2"), std::string::npos) << keyword.err;
}

TEST(PgSchemaCli, AnUnreachableServerIsNamedWithoutItsPassword) {
  // Port 1 on loopback: nothing listens there.
  auto r = run_cli({"db", "migrate", "--database", "postgres://ada:s3cretpassw0rd@127.0.0.1:1/db"});
  EXPECT_EQ(r.exit_code, 70);
  EXPECT_NE(r.err.find("cannot connect to the database postgres://ada:***@127.0.0.1:1/db"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("s3cretpassw0rd"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace skillbox::pg
