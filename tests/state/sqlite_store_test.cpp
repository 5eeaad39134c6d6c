// The SQLite store (skillbox/store.h): values, keys, isolation, quotas, schema checks, damaged files.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "capabilities/store/store_test_util.h"
#include "skillbox/store.h"

namespace skillbox {
namespace {

using testing::raw_query;
using testing::raw_sql;
using testing::read_bytes;
using testing::TempDir;
using testing::write_bytes;

class SqliteStoreTest : public ::testing::Test {
 protected:
  std::filesystem::path file() const { return StoreDatabase::path_in(dir_.path() / "data"); }

  StoreDatabase open_db() {
    auto db = StoreDatabase::open(file());
    if (!db) ADD_FAILURE() << db.error().message;
    return std::move(*db);
  }

  SkillStore skill(StoreDatabase& db, const std::string& id, StorePolicy policy = {}) {
    auto s = db.skill(id, policy);
    if (!s) ADD_FAILURE() << s.error().message;
    return std::move(*s);
  }

  TempDir dir_;
};

std::vector<std::string> keys_of(const SkillStore& s, std::string_view prefix = {}) {
  auto k = s.keys(prefix);
  EXPECT_TRUE(k.ok()) << (k.ok() ? "" : k.error().message);
  return k.ok() ? *k : std::vector<std::string>{};
}

std::optional<std::string> get_of(const SkillStore& s, std::string_view key) {
  auto v = s.get(key);
  EXPECT_TRUE(v.ok()) << (v.ok() ? "" : v.error().message);
  return v.ok() ? *v : std::nullopt;
}

TEST_F(SqliteStoreTest, CreatesAPrivateDurableDatabase) {
  auto db = open_db();
  struct stat st {};
  ASSERT_EQ(::stat(file().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(file().parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  auto info = db.info();
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ(info->schema_version, kStoreSchemaVersion);
  EXPECT_EQ(info->journal_mode, "wal");
  EXPECT_EQ(info->synchronous, 2);  // FULL
  EXPECT_EQ(info->busy_timeout_ms, 5000);
  // Only the store (and SQLite's WAL files) in the directory: the temporary build file is gone.
  for (const auto& e : std::filesystem::directory_iterator(file().parent_path())) {
    const std::string name = e.path().filename().string();
    EXPECT_TRUE(name == "store.sqlite" || name == "store.sqlite-wal" || name == "store.sqlite-shm") << name;
  }
  EXPECT_EQ(raw_query(file(), "PRAGMA application_id"), std::to_string(kStoreApplicationId));
}

TEST_F(SqliteStoreTest, SetGetOverwriteDelete) {
  auto db = open_db();
  auto s = skill(db, "notes");
  EXPECT_EQ(get_of(s, "greeting"), std::nullopt);
  ASSERT_TRUE(s.set("greeting", R"("hello")").ok());
  EXPECT_EQ(get_of(s, "greeting"), R"("hello")");
  ASSERT_TRUE(s.set("greeting", R"({"text":"héllo","n":[1,2.5,null,true]})").ok());
  EXPECT_EQ(get_of(s, "greeting"), R"({"text":"héllo","n":[1,2.5,null,true]})");
  auto removed = s.remove("greeting");
  ASSERT_TRUE(removed.ok());
  EXPECT_TRUE(*removed);
  auto again = s.remove("greeting");
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
  EXPECT_EQ(get_of(s, "greeting"), std::nullopt);
}

TEST_F(SqliteStoreTest, ValuesSurviveReopening) {
  {
    auto db = open_db();
    auto s = skill(db, "notes");
    ASSERT_TRUE(s.set("a", "1").ok());
    ASSERT_TRUE(s.set("b", "[2]").ok());
  }
  auto db = open_db();
  auto s = skill(db, "notes");
  EXPECT_EQ(get_of(s, "a"), "1");
  EXPECT_EQ(get_of(s, "b"), "[2]");
  EXPECT_EQ(keys_of(s), (std::vector<std::string>{"a", "b"}));
}

TEST_F(SqliteStoreTest, KeysByPrefixSortedByUtf8Bytes) {
  auto db = open_db();
  auto s = skill(db, "k");
  for (const char* k : {"b", "ab", "a", "abc", "é", "\xF0\x9F\x98\x80", "a/x", "\xEF\xBF\xBD", "B"})
    ASSERT_TRUE(s.set(k, "0").ok()) << k;
  EXPECT_EQ(keys_of(s), (std::vector<std::string>{"B", "a", "a/x", "ab", "abc", "b", "é", "\xEF\xBF\xBD",
                                                  "\xF0\x9F\x98\x80"}));
  EXPECT_EQ(keys_of(s, "a"), (std::vector<std::string>{"a", "a/x", "ab", "abc"}));
  EXPECT_EQ(keys_of(s, "ab"), (std::vector<std::string>{"ab", "abc"}));
  EXPECT_EQ(keys_of(s, "abcd"), std::vector<std::string>{});
  EXPECT_EQ(keys_of(s, "é"), std::vector<std::string>{"é"});
  EXPECT_EQ(keys_of(s, "z"), std::vector<std::string>{});
}

TEST_F(SqliteStoreTest, PrefixWithInvalidUtf8IsRejected) {
  auto db = open_db();
  auto s = skill(db, "k");
  auto r = s.keys("\xC3");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, StoreErrc::invalid_argument);
  auto nul = s.keys(std::string("a\0", 2));
  ASSERT_FALSE(nul.ok());
  EXPECT_EQ(nul.error().code, StoreErrc::invalid_argument);
  auto long_prefix = s.keys(std::string(513, 'a'));
  ASSERT_FALSE(long_prefix.ok());
  EXPECT_EQ(long_prefix.error().code, StoreErrc::invalid_argument);
}

TEST_F(SqliteStoreTest, SkillsCannotSeeEachOther) {
  auto db = open_db();
  StorePolicy policy;
  policy.quota_bytes = 1000;
  auto a = skill(db, "alpha", policy);
  auto b = skill(db, "beta", policy);
  ASSERT_TRUE(a.set("shared", R"("from alpha")").ok());
  ASSERT_TRUE(b.set("shared", R"("from beta")").ok());
  ASSERT_TRUE(b.set("only-beta", std::string("\"") + std::string(800, 'x') + "\"").ok());
  EXPECT_EQ(get_of(a, "shared"), R"("from alpha")");
  EXPECT_EQ(get_of(b, "shared"), R"("from beta")");
  EXPECT_EQ(get_of(a, "only-beta"), std::nullopt);
  EXPECT_EQ(keys_of(a), std::vector<std::string>{"shared"});
  EXPECT_EQ(keys_of(a, "only"), std::vector<std::string>{});
  // alpha's usage and quota do not include beta's 800 bytes.
  auto ua = a.usage();
  ASSERT_TRUE(ua.ok());
  EXPECT_EQ(ua->keys, 1u);
  EXPECT_EQ(ua->bytes, 6 + 12 + kStoreEntryOverheadBytes);
  ASSERT_TRUE(a.set("big", std::string("\"") + std::string(800, 'y') + "\"").ok());
  // Deleting in alpha never touches beta's row of the same key.
  auto removed = a.remove("shared");
  ASSERT_TRUE(removed.ok() && *removed);
  EXPECT_EQ(get_of(b, "shared"), R"("from beta")");
  auto removed_b = a.remove("only-beta");
  ASSERT_TRUE(removed_b.ok());
  EXPECT_FALSE(*removed_b);
  EXPECT_EQ(get_of(b, "only-beta"), std::string("\"") + std::string(800, 'x') + "\"");
  auto skills = db.skills();
  ASSERT_TRUE(skills.ok());
  EXPECT_EQ(*skills, (std::vector<std::string>{"alpha", "beta"}));
}

TEST_F(SqliteStoreTest, SkillIdsFollowTheManifestRule) {
  auto db = open_db();
  for (const std::string& id : std::vector<std::string>{"", "Upper", "-lead", ".lead", "a b", "a/b", "../x",
                                                        std::string("a\0b", 3), std::string(65, 'a'), "é"}) {
    auto s = db.skill(id, {});
    ASSERT_FALSE(s.ok()) << id;
    EXPECT_EQ(s.error().code, StoreErrc::invalid_argument);
    EXPECT_TRUE(StoreDatabase::check_skill_id(id).has_value()) << id;
  }
  for (const std::string& id :
       std::vector<std::string>{"a", "weather", "a.b_c-d", "0", std::string(64, 'z')}) {
    EXPECT_TRUE(db.skill(id, {}).ok()) << id;
    EXPECT_FALSE(StoreDatabase::check_skill_id(id).has_value()) << id;
  }
}

TEST_F(SqliteStoreTest, KeyRules) {
  auto db = open_db();
  auto s = skill(db, "k");
  auto expect_invalid = [&](const std::string& key, const char* why) {
    auto set = s.set(key, "1");
    ASSERT_FALSE(set.ok()) << why;
    EXPECT_EQ(set.error().code, StoreErrc::invalid_argument) << why;
    auto get = s.get(key);
    ASSERT_FALSE(get.ok()) << why;
    EXPECT_EQ(get.error().code, StoreErrc::invalid_argument) << why;
    auto del = s.remove(key);
    ASSERT_FALSE(del.ok()) << why;
    EXPECT_EQ(del.error().code, StoreErrc::invalid_argument) << why;
  };
  expect_invalid("", "empty");
  expect_invalid(std::string("a\0b", 3), "NUL inside");
  expect_invalid(std::string("\0", 1), "NUL alone");
  expect_invalid("\xFF", "byte FF");
  expect_invalid("\xC0\xAF", "overlong /");
  expect_invalid("\xED\xA0\x80", "encoded lone surrogate");
  expect_invalid("\xF4\x90\x80\x80", "above U+10FFFF");
  expect_invalid("abc\xE2\x82", "truncated sequence");
  EXPECT_EQ(keys_of(s), std::vector<std::string>{}) << "nothing was stored, not even a truncated 'a'";

  // NUL error message names the problem.
  auto nul = s.set(std::string("notes.txt\0/../x", 15), "1");
  ASSERT_FALSE(nul.ok());
  EXPECT_NE(nul.error().message.find("NUL"), std::string::npos) << nul.error().message;

  // Length: 512 bytes of UTF-8 is the limit, counted in bytes, not characters.
  ASSERT_TRUE(s.set(std::string(512, 'k'), "1").ok());
  std::string e256;
  for (int i = 0; i < 256; ++i) e256 += "é";  // 512 bytes
  ASSERT_TRUE(s.set(e256, "1").ok());
  auto too_long = s.set(std::string(513, 'k'), "1");
  ASSERT_FALSE(too_long.ok());
  EXPECT_EQ(too_long.error().code, StoreErrc::quota_exceeded);
  EXPECT_NE(too_long.error().message.find("limit is 512"), std::string::npos) << too_long.error().message;
  auto too_long_utf8 = s.set(e256 + "a", "1");
  ASSERT_FALSE(too_long_utf8.ok());
  EXPECT_EQ(too_long_utf8.error().code, StoreErrc::quota_exceeded);
  // A lookup of a key that can never exist is a malformed argument.
  auto get_long = s.get(std::string(513, 'k'));
  ASSERT_FALSE(get_long.ok());
  EXPECT_EQ(get_long.error().code, StoreErrc::invalid_argument);
  EXPECT_EQ(keys_of(s).size(), 2u);
}

TEST_F(SqliteStoreTest, ValuesMustBeJson) {
  auto db = open_db();
  auto s = skill(db, "v");
  for (const std::string& bad :
       std::vector<std::string>{"", "undefined", "{", "'x'", "1 2", "[1,]", "NaN", "\"\xFF\"",
                                std::string("\"a\0\"", 4), "function(){}",
                                // deeper than export, import and `skillbox test` can read back
                                std::string(513, '[') + std::string(513, ']')}) {
    auto r = s.set("k", bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, StoreErrc::invalid_argument) << bad;
  }
  EXPECT_EQ(keys_of(s), std::vector<std::string>{});
  for (const std::string& good :
       std::vector<std::string>{"null", "0", "-1.5e300", "\"\"", "[]", "{}", " {\"a\" : [ ] } ",
                                std::string(512, '[') + std::string(512, ']'),
                                // a lone surrogate as JSON.stringify escapes it
                                "{\"\\ud800\":\"a\\udfff\"}", "\"\\u0000\""})
    EXPECT_TRUE(s.set("k", good).ok()) << good;
  EXPECT_EQ(get_of(s, "k"), "\"\\u0000\"");
}

TEST_F(SqliteStoreTest, ByteQuotaCountsKeyValueAndOverhead) {
  auto db = open_db();
  StorePolicy policy;
  policy.quota_bytes = 200;
  auto s = skill(db, "q", policy);
  // "k" (1 byte) + value (135 bytes) + overhead (64) = 200: exactly at the limit.
  const std::string v135 = "\"" + std::string(133, 'x') + "\"";
  ASSERT_EQ(v135.size(), 135u);
  ASSERT_TRUE(s.set("k", v135).ok());
  auto u = s.usage();
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->bytes, 200u);
  EXPECT_EQ(u->keys, 1u);

  // One more byte anywhere is refused and changes nothing.
  auto over = s.set("k2", "1");
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().code, StoreErrc::quota_exceeded);
  EXPECT_NE(over.error().message.find("limit is 200"), std::string::npos) << over.error().message;
  EXPECT_NE(over.error().message.find("permissions.store.quota_bytes"), std::string::npos);
  EXPECT_EQ(keys_of(s), std::vector<std::string>{"k"});
  auto grow = s.set("k", v135 + " ");
  ASSERT_FALSE(grow.ok());
  EXPECT_EQ(grow.error().code, StoreErrc::quota_exceeded);
  EXPECT_EQ(get_of(s, "k"), v135);

  // Overwriting: the old value does not count against the new one.
  const std::string other135 = "\"" + std::string(133, 'y') + "\"";
  ASSERT_TRUE(s.set("k", other135).ok());
  EXPECT_EQ(get_of(s, "k"), other135);
  ASSERT_TRUE(s.set("k", "1").ok());
  u = s.usage();
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->bytes, 1 + 1 + kStoreEntryOverheadBytes);
  // Freed space is usable again: 66 + (2 + 68 + 64) = 200.
  ASSERT_TRUE(s.set("k2", "\"" + std::string(66, 'z') + "\"").ok());
  u = s.usage();
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->bytes, 200u);
  auto removed = s.remove("k");
  ASSERT_TRUE(removed.ok() && *removed);
  u = s.usage();
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->keys, 1u);
  EXPECT_EQ(u->bytes, 2 + 68 + kStoreEntryOverheadBytes);
}

TEST_F(SqliteStoreTest, KeyCountQuota) {
  auto db = open_db();
  StorePolicy policy;
  policy.max_keys = 3;
  auto s = skill(db, "q", policy);
  for (const char* k : {"a", "b", "c"}) ASSERT_TRUE(s.set(k, "1").ok());
  auto fourth = s.set("d", "1");
  ASSERT_FALSE(fourth.ok());
  EXPECT_EQ(fourth.error().code, StoreErrc::quota_exceeded);
  EXPECT_NE(fourth.error().message.find("limit is 3, permissions.store.max_keys"), std::string::npos)
      << fourth.error().message;
  EXPECT_EQ(keys_of(s), (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_TRUE(s.set("c", "[\"overwrite is fine\"]").ok());
  ASSERT_TRUE(s.remove("a").ok());
  ASSERT_TRUE(s.set("d", "1").ok());
  EXPECT_EQ(keys_of(s), (std::vector<std::string>{"b", "c", "d"}));
}

TEST_F(SqliteStoreTest, ValueSizeQuota) {
  auto db = open_db();
  StorePolicy policy;
  policy.max_value_bytes = 10;
  auto s = skill(db, "q", policy);
  ASSERT_TRUE(s.set("k", "\"12345678\"").ok());  // 10 bytes
  auto big = s.set("k", "\"123456789\"");
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().code, StoreErrc::quota_exceeded);
  EXPECT_NE(big.error().message.find("limit is 10 bytes"), std::string::npos) << big.error().message;
  EXPECT_EQ(get_of(s, "k"), "\"12345678\"");
}

TEST_F(SqliteStoreTest, LoweredQuotaStillAllowsShrinking) {
  auto db = open_db();
  {
    auto s = skill(db, "q");
    ASSERT_TRUE(s.set("a", "\"" + std::string(300, 'x') + "\"").ok());
    ASSERT_TRUE(s.set("b", "1").ok());
  }
  StorePolicy lowered;
  lowered.quota_bytes = 100;
  lowered.max_keys = 1;
  auto s = skill(db, "q", lowered);
  // Already over both limits: writes that do not grow usage still work, growth does not.
  EXPECT_TRUE(s.set("a", "\"" + std::string(100, 'x') + "\"").ok());
  auto grow = s.set("a", "\"" + std::string(101, 'x') + "\"");
  ASSERT_FALSE(grow.ok());
  EXPECT_EQ(grow.error().code, StoreErrc::quota_exceeded);
  auto more_keys = s.set("c", "1");
  ASSERT_FALSE(more_keys.ok());
  EXPECT_EQ(more_keys.error().code, StoreErrc::quota_exceeded);
  EXPECT_TRUE(s.remove("b").ok());
  EXPECT_EQ(keys_of(s), std::vector<std::string>{"a"});
}

TEST_F(SqliteStoreTest, EntriesExportSortedAndValidated) {
  auto db = open_db();
  auto s = skill(db, "x");
  ASSERT_TRUE(s.set("b", "2").ok());
  ASSERT_TRUE(s.set("a", "{\"v\":1}").ok());
  auto e = s.entries();
  ASSERT_TRUE(e.ok());
  ASSERT_EQ(e->size(), 2u);
  EXPECT_EQ((*e)[0].key, "a");
  EXPECT_EQ((*e)[0].value_json, "{\"v\":1}");
  EXPECT_EQ((*e)[1].key, "b");
  EXPECT_EQ((*e)[1].value_json, "2");
}

TEST_F(SqliteStoreTest, ImportMergesOrReplacesAllOrNothing) {
  auto db = open_db();
  StorePolicy policy;
  policy.max_keys = 4;
  auto s = skill(db, "imp", policy);
  ASSERT_TRUE(s.set("keep", "1").ok());
  ASSERT_TRUE(s.set("over", "1").ok());

  auto merged = s.import({{"over", "2"}, {"new", "\"n\""}}, StoreImportMode::merge);
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  EXPECT_EQ(merged->keys, 3u);
  EXPECT_EQ(keys_of(s), (std::vector<std::string>{"keep", "new", "over"}));
  EXPECT_EQ(get_of(s, "over"), "2");

  // One bad entry: nothing at all is applied, and the message says which entry.
  auto bad = s.import({{"x1", "1"}, {"x2", "{oops"}}, StoreImportMode::merge);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, StoreErrc::invalid_argument);
  EXPECT_EQ(bad.error().message.rfind("entry 2: ", 0), 0u) << bad.error().message;
  auto dup = s.import({{"x1", "1"}, {"x1", "2"}}, StoreImportMode::merge);
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().code, StoreErrc::invalid_argument);
  auto nul = s.import({{std::string("a\0b", 3), "1"}}, StoreImportMode::merge);
  ASSERT_FALSE(nul.ok());
  EXPECT_EQ(nul.error().code, StoreErrc::invalid_argument);
  // Quota: 3 existing + 2 new keys > 4.
  auto over = s.import({{"x1", "1"}, {"x2", "1"}}, StoreImportMode::merge);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().code, StoreErrc::quota_exceeded);
  EXPECT_EQ(keys_of(s), (std::vector<std::string>{"keep", "new", "over"}));

  // Replace: afterwards exactly the imported entries; 4 keys fit even though 3 existed before.
  auto replaced = s.import({{"r1", "1"}, {"r2", "2"}, {"r3", "3"}, {"r4", "4"}}, StoreImportMode::replace);
  ASSERT_TRUE(replaced.ok()) << replaced.error().message;
  EXPECT_EQ(keys_of(s), (std::vector<std::string>{"r1", "r2", "r3", "r4"}));
  EXPECT_EQ(replaced->keys, 4u);
  EXPECT_EQ(replaced->bytes, 4 * (2 + 1 + kStoreEntryOverheadBytes));
  EXPECT_TRUE(db.check().ok());
}

TEST_F(SqliteStoreTest, MissingFileWithoutCreateIsAnErrorAndCreatesNothing) {
  StoreOpenOptions options;
  options.create = false;
  auto db = StoreDatabase::open(file(), options);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.error().code, StoreErrc::io_error);
  EXPECT_FALSE(std::filesystem::exists(file()));
  EXPECT_FALSE(std::filesystem::exists(file().parent_path()));
}

TEST_F(SqliteStoreTest, EmptyExistingFileIsInitialisedInPlace) {
  std::filesystem::create_directories(file().parent_path());
  write_bytes(file(), "");
  auto db = open_db();
  auto info = db.info();
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->schema_version, kStoreSchemaVersion);
  EXPECT_EQ(info->journal_mode, "wal");
  auto s = skill(db, "x");
  EXPECT_TRUE(s.set("k", "1").ok());
}

TEST_F(SqliteStoreTest, GarbageFileIsRefusedAndLeftUntouched) {
  std::filesystem::create_directories(file().parent_path());
  std::string garbage;
  for (int i = 0; i < 8192; ++i) garbage += static_cast<char>((i * 7 + 3) & 0xff);
  write_bytes(file(), garbage);
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto db = StoreDatabase::open(file());
    ASSERT_FALSE(db.ok());
    EXPECT_EQ(db.error().code, StoreErrc::corrupt);
    EXPECT_NE(db.error().message.find("left untouched"), std::string::npos) << db.error().message;
    EXPECT_EQ(db.error().message.find(dir_.path().string()), std::string::npos) << "no host path in messages";
  }
  EXPECT_EQ(read_bytes(file()), garbage);
}

TEST_F(SqliteStoreTest, ForeignSqliteFileIsRefusedAndLeftUntouched) {
  std::filesystem::create_directories(file().parent_path());
  raw_sql(file(),
          "CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO photos VALUES (1, 'cat');");
  const std::string before = read_bytes(file());
  auto db = StoreDatabase::open(file());
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.error().code, StoreErrc::corrupt);
  EXPECT_NE(db.error().message.find("not a skillbox store"), std::string::npos) << db.error().message;
  EXPECT_EQ(read_bytes(file()), before);
  EXPECT_EQ(raw_query(file(), "SELECT name FROM photos"), "cat");
}

TEST_F(SqliteStoreTest, NewerSchemaIsRefusedAndLeftUntouched) {
  {
    auto db = open_db();
    auto s = skill(db, "x");
    ASSERT_TRUE(s.set("k", "1").ok());
  }
  raw_sql(file(), "PRAGMA user_version = " + std::to_string(kStoreSchemaVersion + 1));
  const std::string before = read_bytes(file());
  auto db = StoreDatabase::open(file());
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.error().code, StoreErrc::newer_schema);
  EXPECT_NE(db.error().message.find("schema version " + std::to_string(kStoreSchemaVersion + 1)),
            std::string::npos)
      << db.error().message;
  EXPECT_NE(db.error().message.find("newer skillbox"), std::string::npos) << db.error().message;
  EXPECT_EQ(read_bytes(file()), before);
  EXPECT_EQ(raw_query(file(), "PRAGMA user_version"), std::to_string(kStoreSchemaVersion + 1));
}

TEST_F(SqliteStoreTest, DamagedPagesAreReportedNotReturned) {
  {
    auto db = open_db();
    auto s = skill(db, "x");
    for (int i = 0; i < 200; ++i)
      ASSERT_TRUE(s.set("key" + std::to_string(i), "\"" + std::string(200, 'v') + "\"").ok());
  }
  // Move everything from the WAL into the main file, then overwrite everything after its first page (the
  // header stays valid) with a pattern.
  raw_sql(file(), "PRAGMA wal_checkpoint(TRUNCATE)");
  std::string bytes = read_bytes(file());
  const size_t page = 4096;
  ASSERT_GT(bytes.size(), 4 * page);
  for (size_t i = page; i < bytes.size(); ++i) bytes[i] = static_cast<char>(0xA5 ^ (i & 0x3f));
  write_bytes(file(), bytes);
  const std::string before = read_bytes(file());

  auto db = StoreDatabase::open(file());
  if (!db.ok()) {
    EXPECT_EQ(db.error().code, StoreErrc::corrupt) << db.error().message;
  } else {
    auto s = db->skill("x", {});
    ASSERT_TRUE(s.ok());
    auto v = s->get("key5");
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.error().code, StoreErrc::corrupt) << v.error().message;
    auto w = s->set("key5", "1");
    ASSERT_FALSE(w.ok());
    EXPECT_EQ(w.error().code, StoreErrc::corrupt) << w.error().message;
    auto c = db->check();
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.error().code, StoreErrc::corrupt);
  }
  db = StoreResult<StoreDatabase>(StoreError{});  // close before comparing the bytes
  EXPECT_EQ(read_bytes(file()), before);
}

TEST_F(SqliteStoreTest, TamperedValueIsNeverReturned) {
  {
    auto db = open_db();
    auto s = skill(db, "x");
    ASSERT_TRUE(s.set("k", "1").ok());
  }
  raw_sql(file(), "UPDATE entries SET value = '{not json' WHERE skill = 'x' AND key = 'k'");
  auto db = open_db();
  auto s = skill(db, "x");
  auto v = s.get("k");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code, StoreErrc::corrupt);
  auto e = s.entries();
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, StoreErrc::corrupt);
  auto c = db.check();
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code, StoreErrc::corrupt);
  // The skill can repair it by writing a new value.
  ASSERT_TRUE(s.set("k", "2").ok());
  EXPECT_EQ(get_of(s, "k"), "2");
  EXPECT_TRUE(db.check().ok());
}

TEST_F(SqliteStoreTest, CheckFindsUsageCountersThatDisagree) {
  {
    auto db = open_db();
    auto s = skill(db, "x");
    ASSERT_TRUE(s.set("k", "1").ok());
    EXPECT_TRUE(db.check().ok());
  }
  raw_sql(file(), "UPDATE usage SET bytes = bytes - 1 WHERE skill = 'x'");
  auto db = open_db();
  auto c = db.check();
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code, StoreErrc::corrupt);
  EXPECT_NE(c.error().message.find("usage counters of skill \"x\""), std::string::npos) << c.error().message;
}

// Version 1 as skillbox 1 wrote it: entries WITHOUT ROWID, usage kept by triggers.
constexpr const char* kVersion1Schema = R"sql(
CREATE TABLE entries (
  skill TEXT NOT NULL,
  key   TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (skill, key)
) WITHOUT ROWID;
CREATE TABLE usage (
  skill TEXT NOT NULL PRIMARY KEY,
  keys  INTEGER NOT NULL,
  bytes INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TRIGGER entries_insert AFTER INSERT ON entries BEGIN
  INSERT INTO usage (skill, keys, bytes)
    VALUES (new.skill, 1, length(CAST(new.key AS BLOB)) + length(CAST(new.value AS BLOB)))
    ON CONFLICT (skill) DO UPDATE SET keys = keys + 1, bytes = bytes + excluded.bytes;
END;
CREATE TRIGGER entries_update AFTER UPDATE ON entries BEGIN
  UPDATE usage SET keys = keys - 1,
                   bytes = bytes - length(CAST(old.key AS BLOB)) - length(CAST(old.value AS BLOB))
    WHERE skill = old.skill;
  INSERT INTO usage (skill, keys, bytes)
    VALUES (new.skill, 1, length(CAST(new.key AS BLOB)) + length(CAST(new.value AS BLOB)))
    ON CONFLICT (skill) DO UPDATE SET keys = keys + 1, bytes = bytes + excluded.bytes;
  DELETE FROM usage WHERE skill = old.skill AND keys = 0;
END;
CREATE TRIGGER entries_delete AFTER DELETE ON entries BEGIN
  UPDATE usage SET keys = keys - 1,
                   bytes = bytes - length(CAST(old.key AS BLOB)) - length(CAST(old.value AS BLOB))
    WHERE skill = old.skill;
  DELETE FROM usage WHERE skill = old.skill AND keys = 0;
END;
PRAGMA application_id = 1399538296;
PRAGMA user_version = 1;
)sql";

TEST_F(SqliteStoreTest, Version1DatabaseMigratesWithEveryValue) {
  std::filesystem::create_directories(file().parent_path());
  raw_sql(file(), std::string(kVersion1Schema) + "PRAGMA journal_mode = WAL;");
  // Small values, a value with an overflow chain, keys of several skills and non-ASCII keys.
  const std::string big = "\"" + std::string(300 * 1024, 'b') + "\"";
  raw_sql(file(),
          "INSERT INTO entries VALUES ('alpha', 'k1', '1'), ('alpha', 'é😀', '{\"a\":[1,2]}'), "
          "('beta', 'big', '" +
              big + "'), ('beta', 'k1', '\"x\"');");
  auto db = open_db();
  ASSERT_EQ(db.info()->schema_version, kStoreSchemaVersion);
  auto alpha = skill(db, "alpha");
  auto beta = skill(db, "beta");
  EXPECT_EQ(get_of(alpha, "k1"), "1");
  EXPECT_EQ(get_of(alpha, "é😀"), "{\"a\":[1,2]}");
  EXPECT_EQ(get_of(beta, "big"), big);
  EXPECT_EQ(get_of(beta, "k1"), "\"x\"");
  EXPECT_EQ(alpha.keys().value(), (std::vector<std::string>{"k1", "é😀"}));
  EXPECT_EQ(alpha.usage()->keys, 2u);
  EXPECT_EQ(alpha.usage()->bytes, 2 + 1 + 6 + 11 + 2 * kStoreEntryOverheadBytes);
  EXPECT_EQ(beta.usage()->bytes, 3 + big.size() + 2 + 3 + 2 * kStoreEntryOverheadBytes);
  EXPECT_TRUE(db.check().ok());
  // The migrated file works like a new one, counters included.
  ASSERT_TRUE(beta.set("big", "2").ok());
  EXPECT_EQ(beta.usage()->bytes, 3 + 1 + 2 + 3 + 2 * kStoreEntryOverheadBytes);
  EXPECT_TRUE(db.check().ok());
}

TEST_F(SqliteStoreTest, MigratedAndNewDatabasesHaveTheSameSchema) {
  std::filesystem::create_directories(file().parent_path());
  raw_sql(file(), kVersion1Schema);
  { auto db = open_db(); }
  const std::filesystem::path fresh = dir_.path() / "fresh" / "store.sqlite";
  { ASSERT_TRUE(StoreDatabase::open(fresh).ok()); }
  const std::string q =
      "SELECT group_concat(type || ' ' || name || ' ' || tbl_name || ' ' || coalesce(sql, ''), "
      "char(10)) FROM (SELECT * FROM sqlite_schema ORDER BY type, name)";
  EXPECT_EQ(raw_query(file(), q), raw_query(fresh, q));
  EXPECT_NE(raw_query(fresh, q).find("entries_by_key"), std::string::npos);
}

TEST_F(SqliteStoreTest, Version1DatabaseWithAPlantedTriggerIsRefusedAndLeftUntouched) {
  std::filesystem::create_directories(file().parent_path());
  raw_sql(file(), std::string(kVersion1Schema) +
                      "INSERT INTO entries VALUES ('alpha', 'k', '1');"
                      "CREATE TRIGGER copy AFTER INSERT ON entries BEGIN "
                      "INSERT INTO usage VALUES ('spy', 0, 0); END;");
  const std::string before = read_bytes(file());
  auto db = StoreDatabase::open(file());
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.error().code, StoreErrc::corrupt);
  EXPECT_NE(db.error().message.find("unexpected trigger \"copy\""), std::string::npos) << db.error().message;
  db = StoreResult<StoreDatabase>(StoreError{});
  EXPECT_EQ(read_bytes(file()), before);
}

// Objects someone could add to store.sqlite, each with what it would do.
const std::vector<std::pair<std::string, std::string>> kForeignObjects = {
    // runs inside the host on every write (load_extension is disabled, but the copy would work)
    {"trigger \"evil\"",
     "CREATE TRIGGER evil AFTER INSERT ON entries BEGIN SELECT load_extension('/tmp/x.so'); "
     "INSERT INTO usage VALUES ('spy', 0, 0); END;"},
    {"view \"peek\"", "CREATE VIEW peek AS SELECT skill, key, value FROM entries;"},
    {"table \"loot\"", "CREATE TABLE loot (v TEXT);"},
    {"index \"by_value\"", "CREATE INDEX by_value ON entries (value);"},  // values back in a b-tree key
};

TEST_F(SqliteStoreTest, ForeignSchemaObjectsAreReportedByTypeAndNameAndLeftUntouched) {
  for (const auto& [shown, sql] : kForeignObjects) {
    std::filesystem::remove_all(file().parent_path());
    {
      auto db = open_db();
      auto s = skill(db, "alpha");
      ASSERT_TRUE(s.set("k", "1").ok());
      // An embedder's long-lived connection: check() finds what was added after it opened.
      raw_sql(file(), sql);
      auto c = db.check();
      ASSERT_FALSE(c.ok()) << shown;
      EXPECT_EQ(c.error().code, StoreErrc::corrupt);
      EXPECT_NE(c.error().message.find("unexpected " + shown), std::string::npos) << c.error().message;
    }
    raw_sql(file(), "PRAGMA wal_checkpoint(TRUNCATE)");
    const std::string before = read_bytes(file());
    // A new connection (a skill's invocation) refuses the file before running anything on it.
    auto db = StoreDatabase::open(file());
    ASSERT_FALSE(db.ok()) << shown;
    EXPECT_EQ(db.error().code, StoreErrc::corrupt);
    EXPECT_NE(db.error().message.find("unexpected " + shown), std::string::npos) << db.error().message;
    db = StoreResult<StoreDatabase>(StoreError{});
    EXPECT_EQ(read_bytes(file()), before) << shown;
    EXPECT_EQ(raw_query(file(), "SELECT count(*) FROM usage WHERE skill = 'spy'"), "0");
  }
}

TEST_F(SqliteStoreTest, ChangedOrMissingSchemaObjectsAreReported) {
  { auto db = open_db(); }
  raw_sql(file(),
          "DROP INDEX entries_by_key; CREATE INDEX entries_by_key ON entries (key);"
          "DROP TRIGGER entries_delete;");
  auto db = StoreDatabase::open(file());
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.error().code, StoreErrc::corrupt);
  EXPECT_NE(db.error().message.find("changed index \"entries_by_key\""), std::string::npos)
      << db.error().message;
  EXPECT_NE(db.error().message.find("missing trigger \"entries_delete\""), std::string::npos)
      << db.error().message;
}

TEST_F(SqliteStoreTest, SchemaTextDiffersOnlyInLayoutIsAccepted) {
  { auto db = open_db(); }
  // The same index, written differently: upper/lower case, spaces, a comment.
  raw_sql(
      file(),
      "DROP INDEX entries_by_key; CREATE   UNIQUE index entries_by_key /* same */ ON entries(skill,key);");
  auto db = StoreDatabase::open(file());
  ASSERT_TRUE(db.ok()) << db.error().message;
  EXPECT_TRUE(db->check().ok());
}

}  // namespace
}  // namespace skillbox
