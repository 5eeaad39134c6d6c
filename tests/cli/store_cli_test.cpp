// `skillbox store ...` and `skillbox run --env-file`, run as a subprocess the way an operator runs them:
// exit codes, stdout, stderr, and the database file on disk.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "capabilities/store/store_test_util.h"
#include "skillbox/store.h"

namespace skillbox {
namespace {

namespace fs = std::filesystem;
using testing::read_bytes;
using testing::write_bytes;

struct Exec {
  int exit_code = -1;
  std::string out;
  std::string err;
};

class StoreCli : public ::testing::Test {
 protected:
  fs::path data() const { return tmp_.path() / "data"; }
  fs::path db_file() const { return StoreDatabase::path_in(data()); }

  /// Runs the skillbox binary with `args` (and --data-dir unless `with_data_dir` is false), feeding `input`
  /// on stdin. Output goes through files, so nothing can block on a full pipe.
  Exec skillbox(std::vector<std::string> args, const std::string& input = "", bool with_data_dir = true) {
    if (with_data_dir) {
      args.push_back("--data-dir");
      args.push_back(data().string());
    }
    const fs::path in = tmp_.path() / "stdin", out = tmp_.path() / "stdout", err = tmp_.path() / "stderr";
    write_bytes(in, input);
    std::vector<std::string> storage = {SKILLBOX_CLI_PATH};
    storage.insert(storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : storage) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
      const int fd_in = ::open(in.c_str(), O_RDONLY);
      const int fd_out = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      const int fd_err = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (fd_in < 0 || fd_out < 0 || fd_err < 0) ::_exit(126);
      ::dup2(fd_in, 0);
      ::dup2(fd_out, 1);
      ::dup2(fd_err, 2);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    Exec r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = read_bytes(out);
    r.err = read_bytes(err);
    return r;
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
  EXPECT_EQ(ok({"store", "list", "--skill", "other"}).out, "") << "another skill sees nothing";
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
  EXPECT_EQ(ok({"store", "list", "--skill", "notes"}).out, "");
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
