// pg/connection.h, pg/pool.h, pg/transaction.h, pg/url.h against the test cluster (a scratch database
// per test where tables are made).
#include "pg/connection.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "pg/pool.h"
#include "pg/transaction.h"
#include "pg/url.h"
#include "support/postgres_test_db.h"

namespace skillbox::pg {
namespace {

using skillbox::testing::postgres_url;
using skillbox::testing::ScratchDatabase;
using Clock = std::chrono::steady_clock;

TEST(PgUrl, PasswordsAreNeverShown) {
  EXPECT_EQ(redact_url("postgres://ada:pw@db.internal:5432/app"), "postgres://ada:***@db.internal:5432/app");
  EXPECT_EQ(redact_url("postgresql://ada@db/app?sslmode=require&password=pw2"),
            "postgresql://ada@db/app?sslmode=require&password=***");
  EXPECT_EQ(redact_url("postgres://db/app"), "postgres://db/app");
  EXPECT_EQ(redact_url("host=db password=pw"), "(a connection string)");
  EXPECT_EQ(without_password("login for pw failed", "postgres://u:pw@h/d"), "login for *** failed");
}

TEST(PostgresConnection, AWrongPasswordIsRefusedWithoutEchoingIt) {
  std::string url = postgres_url();
  ASSERT_FALSE(url.empty()) << skillbox::testing::postgres_missing();
  const size_t colon = url.find(':', 11);
  const size_t at = url.find('@');
  url.replace(colon + 1, at - colon - 1, "not-the-password-42");
  auto c = Connection::open(url, std::chrono::seconds(5), std::chrono::milliseconds(1000));
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(c.error().unavailable);
  EXPECT_NE(c.error().message.find("cannot connect to the database postgres://skillbox:***@127.0.0.1"),
            std::string::npos)
      << c.error().message;
  EXPECT_NE(c.error().message.find("password authentication failed"), std::string::npos) << c.error().message;
  EXPECT_EQ(c.error().message.find("not-the-password-42"), std::string::npos) << c.error().message;
}

TEST(PostgresConnection, ValuesTravelAsParametersNeverAsSql) {
  ScratchDatabase db;
  ASSERT_FALSE(db.url().empty());
  auto c = Connection::open(db.url(), std::chrono::seconds(5), std::chrono::milliseconds(1000));
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_TRUE(c->exec_script("making a table", "CREATE TABLE t (v text)"));
  const std::string hostile = "x'); DROP TABLE t; --";
  ASSERT_TRUE(c->exec("inserting", "INSERT INTO t (v) VALUES ($1)", {hostile}));
  ASSERT_TRUE(c->exec("inserting", "INSERT INTO t (v) VALUES ($1)", {std::nullopt}));
  auto rows = c->exec("reading", "SELECT v FROM t ORDER BY v NULLS LAST");
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->rows.size(), 2U);
  EXPECT_EQ(rows->at(0, 0), hostile);
  EXPECT_EQ(rows->at(1, 0), std::nullopt);
  auto bad = c->exec("reading a missing table", "SELECT * FROM nowhere");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().sqlstate, "42P01");
  EXPECT_NE(bad.error().message.find("reading a missing table in the database postgres://skillbox:***@"),
            std::string::npos)
      << bad.error().message;
}

TEST(PostgresPool, AWaitForABusyPoolEndsAtTheDeadline) {
  const std::string url = postgres_url();
  ASSERT_FALSE(url.empty()) << skillbox::testing::postgres_missing();
  PoolOptions one;
  one.max_connections = 1;
  auto pool = Pool::create(url, one);
  auto held = pool->acquire(Clock::now() + std::chrono::seconds(10));
  ASSERT_TRUE(held.ok()) << held.error().message;
  const auto start = Clock::now();
  auto second = pool->acquire(Clock::now() + std::chrono::milliseconds(200));
  const auto waited = Clock::now() - start;
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().message.find("all 1 connections to the database"), std::string::npos)
      << second.error().message;
  EXPECT_GE(waited, std::chrono::milliseconds(190));
  EXPECT_LT(waited, std::chrono::seconds(2));
  // Given back, it is reused rather than a second one opened.
  { auto gone = std::move(*held); }
  auto third = pool->acquire(Clock::now() + std::chrono::milliseconds(200));
  EXPECT_TRUE(third.ok());
}

TEST(PostgresTransaction, SerializationFailuresAreRetriedAndLoseNothing) {
  ScratchDatabase db;
  ASSERT_FALSE(db.url().empty());
  {
    auto c = Connection::open(db.url(), std::chrono::seconds(5), std::chrono::milliseconds(1000));
    ASSERT_TRUE(c.ok());
    ASSERT_TRUE(
        c->exec_script("making a table", "CREATE TABLE counter (n integer); INSERT INTO counter VALUES (0)"));
  }
  PoolOptions four;
  four.max_connections = 4;
  auto pool = Pool::create(db.url(), four);
  constexpr int kThreads = 4;
  constexpr int kEach = 25;
  std::atomic<int> failures{0};
  std::atomic<int> attempts{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) {
        // Read, then write what was read plus one: under SERIALIZABLE, two of these at once make one
        // fail with 40001, which transact() runs again.
        auto r = transact(
            *pool, Clock::now() + std::chrono::seconds(30),
            [&](Connection& c) -> PgResult<int> {
              attempts.fetch_add(1);
              auto n = c.exec("reading", "SELECT n FROM counter");
              if (!n) return n.error();
              const int next = std::stoi(*n->at(0, 0)) + 1;
              if (auto w = c.exec("writing", "UPDATE counter SET n = $1", {std::to_string(next)}); !w)
                return w.error();
              return next;
            },
            "BEGIN ISOLATION LEVEL SERIALIZABLE");
        if (!r) {
          failures.fetch_add(1);
          ADD_FAILURE() << r.error().message;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  auto c = Connection::open(db.url(), std::chrono::seconds(5), std::chrono::milliseconds(1000));
  ASSERT_TRUE(c.ok());
  auto n = c->exec("reading", "SELECT n FROM counter");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->at(0, 0), std::to_string(kThreads * kEach));
  EXPECT_GT(attempts.load(), kThreads * kEach) << "no conflict happened: the retry was not exercised";
}

TEST(PostgresTransaction, ARefusedResultRollsBackWhatTheBodyWrote) {
  ScratchDatabase db;
  ASSERT_FALSE(db.url().empty());
  auto pool = Pool::create(db.url());
  {
    auto lease = pool->acquire(Clock::now() + std::chrono::seconds(10));
    ASSERT_TRUE(lease.ok());
    ASSERT_TRUE((*lease)->exec_script("making a table", "CREATE TABLE t (v text)"));
  }
  auto r =
      transact(*pool, Clock::now() + std::chrono::seconds(10), [&](Connection& c) -> PgResult<Result<int>> {
        if (auto w = c.exec("writing", "INSERT INTO t VALUES ($1)", {"kept?"}); !w) return w.error();
        return Result<int>(Error{"refused after writing"});
      });
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->ok());
  auto lease = pool->acquire(Clock::now() + std::chrono::seconds(10));
  ASSERT_TRUE(lease.ok());
  auto rows = (*lease)->exec("reading", "SELECT count(*) FROM t");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->at(0, 0), "0");
}

}  // namespace
}  // namespace skillbox::pg
