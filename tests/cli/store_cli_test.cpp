// `skillbox store ...` and `skillbox run --env-file`, run as a subprocess the way an operator runs them:
// exit codes, stdout, stderr, and the database file on disk.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pty.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "capabilities/store/store_test_util.h"
#include "skillbox/store.h"
#include "support/cli_exec.h"

namespace skillbox {
namespace {

namespace fs = std::filesystem;
using testing::read_bytes;
using testing::write_bytes;

using Exec = testing::CliExec;

class StoreCli : public ::testing::Test {
 protected:
  fs::path data() const { return tmp_.path() / "data"; }
  fs::path db_file() const { return StoreDatabase::path_in(data()); }

  /// Runs the skillbox binary with `args` (and --data-dir unless `with_data_dir` is false), feeding `input`
  /// on stdin (testing::run_cli: output through files, a hang killed).
  Exec skillbox(std::vector<std::string> args, const std::string& input = "", bool with_data_dir = true) {
    if (with_data_dir) {
      args.push_back("--data-dir");
      args.push_back(data().string());
    }
    return testing::run_cli(args, {.cwd = {}, .env = {}, .input = input, .timeout_s = 120});
  }

  Exec ok(const std::vector<std::string>& args, const std::string& input = "") {
    Exec r = skillbox(args, input);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r;
  }

  testing::TempDir tmp_;
};

TEST_F(StoreCli, SetGetListDelete) {
  ok({"store", "set", "--skill", "notes", "greeting", R"({"text": "héllo", "n": [1, 2]})"});
  ok({"store", "set", "--skill", "notes", "count", "41"});
  ok({"store", "set", "--skill", "notes", "name", R"("Ada")"});
  EXPECT_EQ(ok({"store", "get", "--skill", "notes", "greeting"}).out, R"({"text":"héllo","n":[1,2]})"
                                                                      "\n");
  EXPECT_EQ(ok({"store", "get", "--skill", "notes", "name"}).out, "\"Ada\"\n");
  EXPECT_EQ(ok({"store", "list", "--skill", "notes"}).out, "\"count\"\n\"greeting\"\n\"name\"\n");
  EXPECT_EQ(ok({"store", "list", "--skill", "notes", "--prefix", "n"}).out, "\"name\"\n");
  const Exec other = ok({"store", "list", "--skill", "other"});
  EXPECT_EQ(other.out, "") << "another skill sees nothing";
  // An empty answer says where it looked, on stderr (stdout stays a clean list for scripts).
  EXPECT_NE(other.err.find("no keys for skill \"other\": looked in " + db_file().string()), std::string::npos)
      << other.err;
  EXPECT_NE(other.err.find("$SKILLBOX_HOME"), std::string::npos) << other.err;
  ok({"store", "delete", "--skill", "notes", "count"});

  const Exec missing = skillbox({"store", "get", "--skill", "notes", "count"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.out, "");
  EXPECT_EQ(missing.err, "skillbox: store get: skill \"notes\" has no key \"count\"\n");
  EXPECT_EQ(skillbox({"store", "delete", "--skill", "notes", "count"}).exit_code, 1);

  // What the CLI wrote, a skill reads: the same database, the same rows.
  auto db = StoreDatabase::open(db_file());
  ASSERT_TRUE(db.ok()) << db.error().message;
  auto notes = db->skill("notes", {});
  ASSERT_TRUE(notes.ok());
  auto name = notes->get("name");
  ASSERT_TRUE(name.ok());
  EXPECT_EQ(*name, std::optional<std::string>("\"Ada\""));
}

TEST_F(StoreCli, BadInputExitsTwoAndSaysWhatToDo) {
  const Exec not_json = skillbox({"store", "set", "--skill", "notes", "k", "hello"});
  EXPECT_EQ(not_json.exit_code, 2);
  EXPECT_NE(not_json.err.find("VALUE must be JSON text"), std::string::npos) << not_json.err;
  EXPECT_NE(not_json.err.find("'\"text\"'"), std::string::npos)
      << "shows how to quote a string: " << not_json.err;

  const Exec bad_skill = skillbox({"store", "set", "--skill", "../etc", "k", "1"});
  EXPECT_EQ(bad_skill.exit_code, 2);
  EXPECT_NE(bad_skill.err.find("--skill: skill id must be"), std::string::npos) << bad_skill.err;
  EXPECT_FALSE(fs::exists(db_file())) << "a refused command creates no database";

  const Exec empty_key = skillbox({"store", "set", "--skill", "notes", "", "1"});
  EXPECT_EQ(empty_key.exit_code, 2);
  EXPECT_NE(empty_key.err.find("store key is empty"), std::string::npos) << empty_key.err;

  const Exec long_key = skillbox({"store", "set", "--skill", "notes", std::string(513, 'k'), "1"});
  EXPECT_EQ(long_key.exit_code, 1) << long_key.err;
  EXPECT_NE(long_key.err.find("limit is 512 bytes"), std::string::npos) << long_key.err;

  const Exec no_skill = skillbox({"store", "list"});
  EXPECT_EQ(no_skill.exit_code, 2);
  EXPECT_NE(no_skill.err.find("--skill"), std::string::npos) << no_skill.err;

  const Exec no_sub = skillbox({"store"}, "", false);
  EXPECT_EQ(no_sub.exit_code, 2);
}

TEST_F(StoreCli, ReadsNeverCreateADatabase) {
  const Exec nothing = ok({"store", "list", "--skill", "notes"});
  EXPECT_EQ(nothing.out, "");
  EXPECT_NE(nothing.err.find("no keys for skill \"notes\": " + db_file().string() + " does not exist"),
            std::string::npos)
      << nothing.err;
  EXPECT_EQ(skillbox({"store", "get", "--skill", "notes", "k"}).exit_code, 1);
  EXPECT_EQ(ok({"store", "export", "--skill", "notes"}).out, "");
  EXPECT_EQ(ok({"store", "skills"}).out, "");
  EXPECT_EQ(ok({"store", "check"}).out, "no store database yet: nothing to check\n");
  EXPECT_FALSE(fs::exists(data()));
}

TEST_F(StoreCli, SkillWrittenKeysCannotDriveTheTerminal) {
  {
    auto db = StoreDatabase::open(db_file());
    ASSERT_TRUE(db.ok());
    auto s = db->skill("evil", {});
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE(s->set("\x1b[2J\xe2\x80\xae"
                       "fake",
                       R"("\u001b]0;title\u0007 \u202e")")
                    .ok());
  }
  const Exec list = ok({"store", "list", "--skill", "evil"});
  EXPECT_EQ(list.out, "\"\\u001b[2J\\u202efake\"\n");
  const Exec get = ok({"store", "get", "--skill", "evil",
                       "\x1b[2J\xe2\x80\xae"
                       "fake"});
  EXPECT_EQ(get.out, "\"\\u001b]0;title\\u0007 \\u202e\"\n");
  for (const std::string& text : {list.out, get.out}) {
    EXPECT_EQ(text.find('\x1b'), std::string::npos);
    EXPECT_EQ(text.find("\xe2\x80\xae"), std::string::npos);
  }
}

TEST_F(StoreCli, ExportThenImportReproducesAStore) {
  ok({"store", "set", "--skill", "src", "a", R"({"deep": {"list": [1, 2.5, null, true, "é"]}})"});
  ok({"store", "set", "--skill", "src", "b/1", R"("text with \"quotes\" and \n newline")"});
  ok({"store", "set", "--skill", "src", "c", "-0.5e-3"});
  const Exec exported = ok({"store", "export", "--skill", "src"});
  EXPECT_EQ(exported.out,
            "{\"key\":\"a\",\"value\":{\"deep\":{\"list\":[1,2.5,null,true,\"é\"]}}}\n"
            "{\"key\":\"b/1\",\"value\":\"text with \\\"quotes\\\" and \\n newline\"}\n"
            "{\"key\":\"c\",\"value\":-0.0005}\n");
  ok({"store", "set", "--skill", "dst", "stale", "1"});
  const Exec imported = ok({"store", "import", "--skill", "dst", "--replace", "-"}, exported.out);
  EXPECT_EQ(imported.out.rfind("imported 3 entries into skill dst: now 3 keys, ", 0), 0u) << imported.out;
  EXPECT_EQ(ok({"store", "export", "--skill", "dst"}).out, exported.out);
  EXPECT_EQ(ok({"store", "usage", "--skill", "dst"}).out, ok({"store", "usage", "--skill", "src"}).out);

  // Through a file too, merging: other keys stay.
  const fs::path file = tmp_.path() / "entries.jsonl";
  write_bytes(file, "{\"key\":\"extra\",\"value\":[1]}\r\n{\"value\":2,\"key\":\"a\"}\n");
  ok({"store", "import", "--skill", "dst", file.string()});
  EXPECT_EQ(ok({"store", "list", "--skill", "dst"}).out, "\"a\"\n\"b/1\"\n\"c\"\n\"extra\"\n");
  EXPECT_EQ(ok({"store", "get", "--skill", "dst", "a"}).out, "2\n");
}

TEST_F(StoreCli, ImportIsAllOrNothing) {
  ok({"store", "set", "--skill", "s", "keep", "1"});
  const std::string before = ok({"store", "export", "--skill", "s"}).out;
  struct Case {
    std::string input;
    int exit_code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"{\"key\":\"x\",\"value\":1}\n{\"key\":\"y\",\"value\":2}\nnot json\n", 2,
       "stdin: line 3: not valid JSON"},
      {"{\"key\":\"x\",\"value\":1}\n\n{\"key\":\"y\",\"value\":2}\n", 2, "stdin: line 2: empty line"},
      {"[1,2]\n", 2, "stdin: line 1: expected an object"},
      {"{\"key\":1,\"value\":2}\n", 2, "stdin: line 1: \"key\" must be a string"},
      {"{\"key\":\"x\"}\n", 2, "stdin: line 1: \"value\" is missing"},
      {"{\"key\":\"x\",\"value\":1,\"extra\":0}\n", 2, "stdin: line 1: unexpected member \"extra\""},
      {"{\"key\":\"x\",\"value\":1}\n{\"key\":\"x\",\"value\":2}\n", 2,
       "stdin: line 2: the same key appears more than once"},
      {"{\"key\":\"\",\"value\":1}\n", 2, "stdin: line 1: store key is empty"},
      {"{\"key\":\"a\\u0000b\",\"value\":1}\n", 2, "stdin: line 1: store key contains a NUL character"},
      {"{\"key\":\"x\",\"value\":1}\n{\"key\":\"y\",\"value\":1}\n", 1,
       "store quota exceeded: 3 keys (limit is 2"},
  };
  for (const Case& c : cases) {
    const Exec r = skillbox({"store", "import", "--skill", "s", "--max-keys", "2", "-"}, c.input);
    EXPECT_EQ(r.exit_code, c.exit_code) << c.input << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << "expected \"" << c.message << "\" in: " << r.err;
    EXPECT_EQ(ok({"store", "export", "--skill", "s"}).out, before) << "nothing changed by: " << c.input;
  }
  const Exec unreadable = skillbox({"store", "import", "--skill", "s", (tmp_.path() / "missing").string()});
  EXPECT_EQ(unreadable.exit_code, 2);
  EXPECT_NE(unreadable.err.find("cannot open the file"), std::string::npos) << unreadable.err;
}

TEST_F(StoreCli, DamagedOrNewerDatabasesExit70AndStayUntouched) {
  fs::create_directories(data());
  const std::string garbage(8192, 'Z');
  write_bytes(db_file(), garbage);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"store", "list", "--skill", "notes"},
        std::vector<std::string>{"store", "set", "--skill", "notes", "k", "1"},
        std::vector<std::string>{"store", "check"}}) {
    const Exec r = skillbox(args);
    EXPECT_EQ(r.exit_code, 70) << args[1] << ": " << r.err;
    EXPECT_NE(r.err.find(db_file().string() + ": the store database is damaged"), std::string::npos) << r.err;
  }
  EXPECT_EQ(read_bytes(db_file()), garbage);

  fs::remove(db_file());
  ok({"store", "set", "--skill", "notes", "k", "1"});
  testing::raw_sql(db_file(), "PRAGMA user_version = 99");
  const std::string newer = read_bytes(db_file());
  const Exec r = skillbox({"store", "get", "--skill", "notes", "k"});
  EXPECT_EQ(r.exit_code, 70);
  EXPECT_NE(r.err.find("schema version 99, newer than this skillbox understands"), std::string::npos)
      << r.err;
  EXPECT_EQ(read_bytes(db_file()), newer);
}

TEST_F(StoreCli, UsageSkillsAndCheck) {
  ok({"store", "set", "--skill", "beta", "k", "12"});
  ok({"store", "set", "--skill", "alpha", "key", "\"v\""});
  EXPECT_EQ(ok({"store", "skills"}).out, "alpha\nbeta\n");
  EXPECT_EQ(ok({"store", "usage", "--skill", "alpha", "--quota-bytes", "1000"}).out,
            "keys  1 of 10000\nbytes 70 of 1000 (keys + values + 64 per entry)\n");
  EXPECT_EQ(ok({"store", "check"}).out,
            "ok: schema version " + std::to_string(kStoreSchemaVersion) + ", journal mode wal\n");
  testing::raw_sql(db_file(), "UPDATE usage SET keys = 5 WHERE skill = 'beta'");
  const Exec bad = skillbox({"store", "check"});
  EXPECT_EQ(bad.exit_code, 70);
  EXPECT_NE(bad.err.find("usage counters of skill \"beta\" disagree"), std::string::npos) << bad.err;
}

TEST_F(StoreCli, CheckReportsEveryForeignSchemaObjectAndLeavesTheFile) {
  ok({"store", "set", "--skill", "alpha", "k", "1"});
  testing::raw_sql(
      db_file(),
      "CREATE TRIGGER evil AFTER INSERT ON entries BEGIN SELECT load_extension('/tmp/x.so'); END;"
      "CREATE VIEW peek AS SELECT value FROM entries;"
      "CREATE TABLE loot (v TEXT);"
      "CREATE INDEX by_value ON entries (value);");
  const std::string before = read_bytes(db_file());
  const Exec r = skillbox({"store", "check"});
  EXPECT_EQ(r.exit_code, 70) << r.err;
  EXPECT_EQ(r.out, "");
  for (const char* shown : {"unexpected trigger \"evil\"", "unexpected view \"peek\"",
                            "unexpected table \"loot\"", "unexpected index \"by_value\""})
    EXPECT_NE(r.err.find(shown), std::string::npos) << shown << " in " << r.err;
  EXPECT_EQ(read_bytes(db_file()), before);
  // A skill's (or operator's) write is refused too: the trigger never runs.
  const Exec w = skillbox({"store", "set", "--skill", "alpha", "k2", "2"});
  EXPECT_EQ(w.exit_code, 70);
  EXPECT_EQ(read_bytes(db_file()), before);
}

/// A skill folder whose skill.json has `store` as permissions.store (JSON text).
fs::path write_store_skill(const fs::path& dir, const std::string& id, const std::string& store) {
  fs::create_directories(dir);
  write_bytes(dir / "skill.json", R"({"id": ")" + id +
                                      R"(", "name": "N", "version": "1.0.0", "entry": "index.js",)" +
                                      R"( "permissions": {"store": )" + store + "}}");
  write_bytes(dir / "index.js", "export default () => null");
  return dir;
}

/// `n` import lines {"key": "PREFIXi", "value": i}.
std::string import_lines(size_t n, const std::string& prefix = "k") {
  std::string text;
  for (size_t i = 0; i < n; ++i)
    text += R"({"key":")" + prefix + std::to_string(i) + R"(","value":)" + std::to_string(i) + "}\n";
  return text;
}

TEST_F(StoreCli, SkillDirWritesHonourTheManifestQuotas) {
  const fs::path dir = write_store_skill(tmp_.path() / "notes", "notes",
                                         R"({"max_keys": 2, "quota_bytes": 1000, "max_value_bytes": 10})");
  const std::string manifest = (fs::canonical(dir) / "skill.json").string();
  ok({"store", "set", "--skill-dir", dir.string(), "a", "1"});
  ok({"store", "set", "--skill-dir", dir.string(), "--skill", "notes", "b", "2"});  // --skill may agree
  EXPECT_EQ(ok({"store", "usage", "--skill-dir", dir.string()}).out,
            "keys  2 of 2\nbytes 132 of 1000 (keys + values + 64 per entry)\n");
  const std::string before = ok({"store", "export", "--skill", "notes"}).out;
  ASSERT_EQ(before, "{\"key\":\"a\",\"value\":1}\n{\"key\":\"b\",\"value\":2}\n");

  const Exec third = skillbox({"store", "set", "--skill-dir", dir.string(), "c", "3"});
  EXPECT_EQ(third.exit_code, 1);
  EXPECT_EQ(third.err,
            "skillbox: store set: store quota exceeded: 3 keys (limit is 2, permissions.store.max_keys); "
            "nothing was changed; the limit is permissions.store.max_keys in " +
                manifest + "\n");
  const Exec big = skillbox({"store", "set", "--skill-dir", dir.string(), "a", R"("0123456789")"});
  EXPECT_EQ(big.exit_code, 1);
  EXPECT_NE(big.err.find("store value is 12 bytes of JSON (limit is 10 bytes); the limit is "
                         "permissions.store.max_value_bytes in " +
                         manifest),
            std::string::npos)
      << big.err;
  const Exec imported = skillbox({"store", "import", "--skill-dir", dir.string(), "-"},
                                 "{\"key\":\"a\",\"value\":5}\n{\"key\":\"z\",\"value\":6}\n");
  EXPECT_EQ(imported.exit_code, 1);
  EXPECT_NE(
      imported.err.find("3 keys (limit is 2, permissions.store.max_keys); nothing was changed; the limit is "
                        "permissions.store.max_keys in " +
                        manifest),
      std::string::npos)
      << imported.err;
  EXPECT_EQ(ok({"store", "export", "--skill", "notes"}).out, before) << "refused writes change nothing";

  // Without --skill-dir the same write goes through: the default quotas, said so in the message when hit.
  ok({"store", "set", "--skill", "notes", "c", "3"});
  const Exec flag = skillbox({"store", "set", "--skill", "notes", "--max-keys", "3", "d", "4"});
  EXPECT_EQ(flag.exit_code, 1);
  EXPECT_NE(flag.err.find("the limit is --max-keys on the command line"), std::string::npos) << flag.err;
}

TEST_F(StoreCli, SkillDirQuotasMayBeAboveTheDefaultsAndUnsetOnesAreTheDefaults) {
  // 10,001 keys: one more than the default max_keys.
  const std::string lines = import_lines(10'001);
  const Exec by_id = skillbox({"store", "import", "--skill", "big", "-"}, lines);
  EXPECT_EQ(by_id.exit_code, 1);
  EXPECT_NE(
      by_id.err.find("10001 keys (limit is 10000, permissions.store.max_keys); nothing was changed; the "
                     "limit is the default of permissions.store.max_keys (no --skill-dir: give the "
                     "skill's folder to use its skill.json, or --max-keys N)"),
      std::string::npos)
      << by_id.err;
  EXPECT_EQ(ok({"store", "list", "--skill", "big"}).out, "");

  const fs::path dir = write_store_skill(tmp_.path() / "big", "big", R"({"max_keys": 20000})");
  const Exec by_dir = ok({"store", "import", "--skill-dir", dir.string(), "-"}, lines);
  EXPECT_EQ(by_dir.out.rfind("imported 10001 entries into skill big: now 10001 keys, ", 0), 0u) << by_dir.out;
  EXPECT_EQ(by_dir.err, "") << "no progress text when stderr is not a terminal";
  // quota_bytes is not in that skill.json: its default (1 MiB) applies and the message says so.
  const Exec bytes = skillbox({"store", "import", "--skill-dir", dir.string(), "-"},
                              R"({"key":"huge","value":")" + std::string(900'000, 'x') + "\"}\n");
  EXPECT_EQ(bytes.exit_code, 1);
  EXPECT_NE(bytes.err.find("permissions.store.quota_bytes; keys + values + 64 bytes per entry); nothing was "
                           "changed; the limit is the default of permissions.store.quota_bytes, which " +
                           (fs::canonical(dir) / "skill.json").string() + " does not set"),
            std::string::npos)
      << bytes.err;
  EXPECT_EQ(ok({"store", "get", "--skill", "big", "k7"}).out, "7\n");
}

TEST_F(StoreCli, SkillDirOfAFolderThatDoesNotOwnTheIdIsRefused) {
  // notes is bound to its folder (as its first run with a data request would bind it); another folder
  // claiming the id, with larger quotas, must not lend them to notes' store.
  const fs::path owner = write_store_skill(tmp_.path() / "notes", "notes", R"({"max_keys": 2})");
  const fs::path claimer =
      write_store_skill(tmp_.path() / "hostile", "notes", R"({"max_keys": 1000, "quota_bytes": 1000000})");
  ok({"skills", "rebind", owner.string()});
  ok({"store", "set", "--skill-dir", owner.string(), "a", "1"});
  const Exec refused = skillbox({"store", "set", "--skill-dir", claimer.string(), "b", "2"});
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("skill notes belongs to the folder " + fs::canonical(owner).string() +
                             ", not this one"),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("skillbox skills rebind"), std::string::npos) << refused.err;
  EXPECT_EQ(ok({"store", "list", "--skill", "notes"}).out, "\"a\"\n") << "nothing was written";
}

TEST_F(StoreCli, SkillDirMistakesExitTwoAndCreateNothing) {
  const fs::path dir = write_store_skill(tmp_.path() / "notes", "notes", R"({"max_keys": 2})");
  const Exec other = skillbox({"store", "set", "--skill", "other", "--skill-dir", dir.string(), "k", "1"});
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_EQ(other.err, "skillbox: store set: --skill other is not the skill in --skill-dir " + dir.string() +
                           ", whose id is notes; leave out --skill, or give the folder of skill other\n");

  const Exec missing = skillbox({"store", "import", "--skill-dir", (tmp_.path() / "nope").string(), "-"},
                                "{\"key\":\"k\",\"value\":1}\n");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.err.rfind("skillbox: store import: --skill-dir: ", 0), 0u) << missing.err;

  const Exec both = skillbox({"store", "set", "--skill-dir", dir.string(), "--max-keys", "5", "k", "1"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("--skill-dir excludes --max-keys"), std::string::npos) << both.err;

  const Exec neither = skillbox({"store", "set", "k", "1"});
  EXPECT_EQ(neither.exit_code, 2);
  EXPECT_EQ(neither.err,
            "skillbox: store set: give the skill: --skill ID, or --skill-dir DIR to use the quotas of its "
            "skill.json\n");
  EXPECT_FALSE(fs::exists(db_file())) << "a refused command creates no database";
}

/// Runs skillbox with stderr on a pseudo-terminal (stdin from `input`, stdout to a file); returns what
/// the terminal showed (the pty turns "\n" into "\r\n") and the exit code.
Exec on_terminal(const std::vector<std::string>& args, const std::string& input, const fs::path& scratch) {
  const fs::path in = scratch / "pty-stdin", out = scratch / "pty-stdout";
  write_bytes(in, input);
  std::vector<std::string> storage = {SKILLBOX_CLI_PATH};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  int master = -1;
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (pid < 0) {
    ADD_FAILURE() << "forkpty failed: " << std::strerror(errno);
    return {};
  }
  if (pid == 0) {
    const int fd_in = ::open(in.c_str(), O_RDONLY);
    const int fd_out = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd_in < 0 || fd_out < 0) ::_exit(126);
    ::dup2(fd_in, 0);
    ::dup2(fd_out, 1);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  Exec r;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(master, buf, sizeof buf);
    if (n > 0) {
      r.err.append(buf, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;  // EIO: the child closed the terminal
    }
  }
  ::close(master);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_bytes(out);
  return r;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

TEST_F(StoreCli, ImportShowsProgressOnATerminalOnly) {
  const std::vector<std::string> args = {"store",      "import",     "--skill",       "p",
                                         "--max-keys", "200000",     "--quota-bytes", "100000000",
                                         "-",          "--data-dir", data().string()};
  const Exec small = on_terminal(args, import_lines(3), tmp_.path());
  EXPECT_EQ(small.exit_code, 0) << small.err;
  EXPECT_EQ(small.out.rfind("imported 3 entries into skill p", 0), 0u) << small.out;
  EXPECT_EQ(small.err,
            "\rimporting: 1 line\x1b[K\rimporting: 3 lines, writing\x1b[K"
            "\rimporting: 3 lines, done\x1b[K\r\n");

  const auto start = std::chrono::steady_clock::now();
  const Exec big = on_terminal(args, import_lines(150'000, "big"), tmp_.path());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(big.exit_code, 0) << big.err;
  EXPECT_NE(big.err.find("\rimporting: 150,000 lines, done\x1b[K\r\n"), std::string::npos) << big.err;
  const size_t updates = count(big.err, "\rimporting: ");
  EXPECT_LE(updates, static_cast<size_t>(seconds * 10) + 3) << "at most ten a second, in " << seconds << " s";
  EXPECT_GE(updates, 3u);

  // A refusal ends the progress line first, so the message starts a line of its own.
  const Exec bad = on_terminal(args, import_lines(2) + "oops\n", tmp_.path());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("\x1b[K\r\nskillbox: store import: stdin: line 3: not valid JSON"),
            std::string::npos)
      << bad.err;

  // Not a terminal: the same imports print no progress at all.
  const Exec piped = skillbox({"store", "import", "--skill", "q", "-"}, import_lines(3));
  EXPECT_EQ(piped.exit_code, 0);
  EXPECT_EQ(piped.err, "");
  const Exec refused = skillbox({"store", "import", "--skill", "q", "-"}, "oops\n");
  EXPECT_EQ(refused.err, "skillbox: store import: stdin: line 1: not valid JSON\n");
}

TEST_F(StoreCli, RunReadsEnvValuesFromAnEnvFile) {
  const fs::path skill = tmp_.path() / "skill";
  fs::create_directories(skill);
  write_bytes(skill / "skill.json",
              R"({"id": "envy", "name": "Envy", "version": "1.0.0", "entry": "index.js",)"
              R"( "permissions": {"env": ["API_KEY", "REGION"]}})");
  write_bytes(
      skill / "index.js",
      "export default () => [env.get('API_KEY'), env.get('REGION'), env.get('NOT_GRANTED') === undefined]");
  const fs::path env_file = tmp_.path() / "prod.env";
  write_bytes(env_file, "# settings\nexport API_KEY='k-123 $x'\nREGION=eu # comment\nNOT_GRANTED=hunter2\n");
  const Exec r = ok({"run", skill.string(), "--json", "--env-file", env_file.string()});
  EXPECT_NE(r.out.find(R"("value":["k-123 $x","eu",true])"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("hunter2"), std::string::npos);

  write_bytes(env_file, "API_KEY=1\nsk-live-secret\n");
  const Exec bad = skillbox({"run", skill.string(), "--env-file", env_file.string()});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--env-file: " + env_file.string() + ": line 2: expected NAME=VALUE"),
            std::string::npos)
      << bad.err;
  EXPECT_EQ(bad.err.find("sk-live-secret"), std::string::npos) << "the error never quotes the file";
}

/// A skill that returns the env values API_KEY and REGION.
fs::path write_env_skill(const fs::path& dir) {
  fs::create_directories(dir);
  write_bytes(dir / "skill.json", R"({"id": "envy", "name": "Envy", "version": "1.0.0", "entry": "index.js",)"
                                  R"( "permissions": {"env": ["API_KEY", "REGION"]}})");
  write_bytes(dir / "index.js", "export default () => [env.get('API_KEY'), env.get('REGION')]");
  return dir;
}

TEST_F(StoreCli, RunReadsAnEnvFileFromAPipe) {
  const fs::path skill = write_env_skill(tmp_.path() / "skill");
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);  // inherited by skillbox, as bash's `<(cmd)` is
  const std::string text = "API_KEY=piped\nREGION=eu\n";
  ASSERT_EQ(::write(fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(fds[1]);
  const Exec r = ok({"run", skill.string(), "--json", "--env-file", "/dev/fd/" + std::to_string(fds[0])});
  ::close(fds[0]);
  EXPECT_NE(r.out.find(R"("value":["piped","eu"])"), std::string::npos) << r.out;
}

TEST_F(StoreCli, RunWithAnEnvFileFifoThatNobodyWritesFailsPromptly) {
  const fs::path skill = write_env_skill(tmp_.path() / "skill");
  const fs::path fifo = tmp_.path() / "secrets.env";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  const Exec r = skillbox({"run", skill.string(), "--env-file", fifo.string()});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10)) << "it must not hang";
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--env-file: " + fifo.string() +
                       ": the env file is a FIFO that no process writes to (nothing arrived within 2000 ms)"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace skillbox
