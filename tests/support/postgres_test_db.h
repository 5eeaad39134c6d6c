// tests/support/postgres_test_db.h — the PostgreSQL test cluster, as the tests reach it.
//
// ctest starts a throwaway cluster (scripts/pg-cluster.sh, fixture `postgres`) and tells the tests
// that need it where it is: SKILLBOX_TEST_POSTGRES_URL_FILE names the file holding its URL (the port is
// picked when the cluster starts, after ctest has read the tests' environment). A developer can point
// the same tests at their own server with SKILLBOX_TEST_POSTGRES_URL instead.
#pragma once

#include <filesystem>
#include <string>

namespace skillbox::testing {

/// The test cluster's URL; empty when neither variable is set (postgres_missing() says what to do).
[[nodiscard]] std::string postgres_url();
/// Why there is no URL and how to get one, for a failing test's message.
[[nodiscard]] std::string postgres_missing();

/// postgres_url() with the schema migrated (once per process; a forked child that migrates first does
/// so with its own connection). Empty when there is no URL.
[[nodiscard]] std::string migrated_postgres_url();

/// A tenant id of its own for the storage of `root` (a test's scratch folder): the same for every call
/// with the same root in this process and its forked children, different across test processes, so
/// that tests sharing the cluster never see each other's rows.
[[nodiscard]] std::string postgres_tenant_for(const std::filesystem::path& root);

/// A new, empty database on the test cluster, dropped (with its connections ended) by the destructor:
/// for tests of migrations, which need a database without a schema.
class ScratchDatabase {
 public:
  ScratchDatabase();
  ScratchDatabase(const ScratchDatabase&) = delete;
  ScratchDatabase& operator=(const ScratchDatabase&) = delete;
  ~ScratchDatabase();

  /// Its URL (empty when the database could not be made; the constructor added a test failure).
  [[nodiscard]] const std::string& url() const { return url_; }
  [[nodiscard]] const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::string url_;
};

}  // namespace skillbox::testing
