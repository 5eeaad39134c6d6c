// tests/support/postgres_test_db.cpp — reaching the PostgreSQL test cluster.
#include "support/postgres_test_db.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <mutex>
#include <random>

#include "pg/connection.h"
#include "pg/schema.h"

namespace skillbox::testing {
namespace {

// Fixed when the test process starts (forked children inherit it): part of every tenant id.
const std::string kProcessNonce = [] {
  std::random_device rd;
  return std::to_string(rd()) + std::to_string(rd());
}();

std::string random_hex() {
  std::random_device rd;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%08x%08x", rd(), rd());
  return buf;
}

// `url` with its database name replaced by `db`.
std::string with_database(const std::string& url, const std::string& db) {
  const size_t authority = url.find("://") + 3;
  const size_t slash = url.find('/', authority);
  const size_t query = url.find('?', authority);
  const std::string tail = query == std::string::npos ? "" : url.substr(query);
  const size_t path_start =
      slash == std::string::npos ? (query == std::string::npos ? url.size() : query) : slash;
  return url.substr(0, path_start) + "/" + db + tail;
}

pg::PgResult<pg::Connection> connect(const std::string& url) {
  return pg::Connection::open(url, std::chrono::seconds(10), std::chrono::milliseconds(5000));
}

}  // namespace

std::string postgres_url() {
  if (const char* url = std::getenv("SKILLBOX_TEST_POSTGRES_URL"); url && *url) return url;
  const char* file = std::getenv("SKILLBOX_TEST_POSTGRES_URL_FILE");
  if (!file || !*file) return "";
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string postgres_missing() {
  return "no PostgreSQL test database: run these tests through ctest (the fixture `postgres` starts one with "
         "scripts/pg-cluster.sh), or set SKILLBOX_TEST_POSTGRES_URL to a postgres:// URL of a database you "
         "can spare";
}

std::string migrated_postgres_url() {
  static std::once_flag once;
  const std::string url = postgres_url();
  if (url.empty()) return url;
  std::call_once(once, [&] {
    auto conn = connect(url);
    if (!conn) {
      ADD_FAILURE() << conn.error().message;
      return;
    }
    if (auto r = pg::migrate(*conn); !r) ADD_FAILURE() << r.error().message;
  });
  return url;
}

std::string postgres_tenant_for(const std::filesystem::path& root) {
  return "test-" + kProcessNonce + "-" + std::to_string(std::hash<std::string>{}(root.string()));
}

ScratchDatabase::ScratchDatabase() {
  const std::string base = postgres_url();
  if (base.empty()) {
    ADD_FAILURE() << postgres_missing();
    return;
  }
  auto conn = connect(base);
  if (!conn) {
    ADD_FAILURE() << conn.error().message;
    return;
  }
  name_ = "skillbox_scratch_" + random_hex();
  // An identifier we made from [0-9a-f_]: no value from outside reaches this SQL.
  if (auto r = conn->exec_script("creating a scratch database", "CREATE DATABASE " + name_); !r) {
    ADD_FAILURE() << r.error().message;
    name_.clear();
    return;
  }
  url_ = with_database(base, name_);
}

ScratchDatabase::~ScratchDatabase() {
  if (name_.empty()) return;
  auto conn = connect(postgres_url());
  if (!conn) return;
  (void)conn->exec_script("dropping a scratch database",
                          "DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
}

}  // namespace skillbox::testing
