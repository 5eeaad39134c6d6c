// `skillbox skills list|rebind` and the identity refusal of `skillbox run`, run as subprocesses the way an
// operator runs them: exit codes, stdout, stderr and the owner files on disk (docs/cli.md "skillbox skills").
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "capabilities/store/store_test_util.h"

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

class SkillsCli : public ::testing::Test {
 protected:
  fs::path data() const { return tmp_.path() / "data"; }

  /// A skill folder `name` with id `id` that counts its runs in the store and returns the count.
  fs::path skill(const std::string& name, const std::string& id) const {
    const fs::path dir = tmp_.path() / name;
    fs::create_directories(dir);
    write_bytes(dir / "skill.json", R"({"id": ")" + id + R"(", "entry": "index.js"})");
    write_bytes(
        dir / "index.js",
        "export default () => { const n = (store.get('runs') ?? 0) + 1; store.set('runs', n); return n }");
    return dir;
  }

  /// Starts the skillbox binary with `args` + --data-dir; output goes to files named after `tag`.
  pid_t start(std::vector<std::string> args, const std::string& tag = "") const {
    args.push_back("--data-dir");
    args.push_back(data().string());
    std::vector<std::string> storage = {SKILLBOX_CLI_PATH};
    storage.insert(storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : storage) argv.push_back(a.data());
    argv.push_back(nullptr);
    const fs::path out = tmp_.path() / ("stdout" + tag), err = tmp_.path() / ("stderr" + tag);
    const pid_t pid = ::fork();
    if (pid == 0) {
      const int fd_out = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      const int fd_err = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      const int fd_in = ::open("/dev/null", O_RDONLY);
      if (fd_in < 0 || fd_out < 0 || fd_err < 0) ::_exit(126);
      ::dup2(fd_in, 0);
      ::dup2(fd_out, 1);
      ::dup2(fd_err, 2);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    return pid;
  }
  Exec finish(pid_t pid, const std::string& tag = "") const {
    int status = 0;
    ::waitpid(pid, &status, 0);
    Exec r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = read_bytes(tmp_.path() / ("stdout" + tag));
    r.err = read_bytes(tmp_.path() / ("stderr" + tag));
    return r;
  }
  Exec skillbox(const std::vector<std::string>& args) const { return finish(start(args)); }

  testing::TempDir tmp_;
};

TEST_F(SkillsCli, RunRefusesASecondFolderUntilTheOperatorRebindsIt) {
  const fs::path weather = fs::canonical(skill("weather", "weather"));
  const fs::path impostor = fs::canonical(skill("impostor", "weather"));
  Exec r = skillbox({"run", weather.string(), "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(R"("value":1)"), std::string::npos) << r.out;

  r = skillbox({"run", impostor.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("skill id \"weather\" belongs to the folder \"" + weather.string() + "\""),
            std::string::npos)
      << r.err;
  const std::string command =
      "skillbox skills rebind " + impostor.string() + " --id weather --data-dir " + data().string();
  EXPECT_NE(r.err.find(command), std::string::npos) << r.err;

  r = skillbox({"run", impostor.string(), "--json"});
  EXPECT_EQ(r.exit_code, 2);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["outcome"], "invalid");
  EXPECT_EQ(j["error"]["name"], "InvalidSkill");
  EXPECT_NE(j["error"]["message"].get<std::string>().find(command), std::string::npos);

  // The command the message names works as printed (minus the program path).
  r = skillbox({"skills", "rebind", impostor.string(), "--id", "weather"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "skill id weather now belongs to " + impostor.string() + " (was " + weather.string() + ")\n");
  r = skillbox({"run", impostor.string(), "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(R"("value":2)"), std::string::npos)
      << "weather's store, now the impostor's: " << r.out;
  r = skillbox({"run", weather.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("belongs to the folder \"" + impostor.string() + "\""), std::string::npos) << r.err;
}

TEST_F(SkillsCli, RebindReadsTheIdFromSkillJsonByDefault) {
  const fs::path a = fs::canonical(skill("a", "alpha"));
  Exec r = skillbox({"skills", "rebind", a.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "skill id alpha now belongs to " + a.string() + "\n");
  EXPECT_EQ(read_bytes(data() / "bindings" / "alpha"), "skillbox-owner 1\n" + a.string() + "\n");
  EXPECT_EQ(skillbox({"run", a.string()}).exit_code, 0);
}

TEST_F(SkillsCli, ListShowsEachIdAndItsFolder) {
  Exec r = skillbox({"skills", "list"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "") << "no data directory yet: nothing bound";
  const fs::path b = fs::canonical(skill("b", "beta"));
  const fs::path a = fs::canonical(skill("a", "alpha"));
  ASSERT_EQ(skillbox({"run", b.string()}).exit_code, 0);
  ASSERT_EQ(skillbox({"run", a.string()}).exit_code, 0);
  fs::remove_all(b);
  r = skillbox({"skills", "list"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "alpha  " + a.string() + "\nbeta  " + b.string() +
                       "  (folder missing: rebind the id where the skill is now)\n");
  r = skillbox({"skills", "list", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out), nlohmann::json::parse(R"([{"id":"alpha","dir":")" + a.string() +
                                                                R"(","exists":true},{"id":"beta","dir":")" +
                                                                b.string() + R"(","exists":false}])"));
}

TEST_F(SkillsCli, BadArgumentsExitWithTwo) {
  Exec r = skillbox({"skills", "rebind", (tmp_.path() / "missing").string(), "--id", "x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not a folder"), std::string::npos) << r.err;
  fs::create_directories(tmp_.path() / "empty");
  r = skillbox({"skills", "rebind", (tmp_.path() / "empty").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no skill.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pass --id ID"), std::string::npos) << r.err;
  r = skillbox({"skills", "rebind", (tmp_.path() / "empty").string(), "--id", "Not/Valid"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--id: expected 1 to 64 characters"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(data() / "bindings")) << "nothing written";
  // No subcommand: the error says what is missing (the --data-dir value the fixture appends is not
  // taken for one) and the help of `skills` follows, listing its commands.
  r = skillbox({"skills"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("a skills command is required"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("unknown skills command"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("rebind"), std::string::npos) << r.err;
  r = skillbox({"skills", "rebnid"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown skills command \"rebnid\" (did you mean \"rebind\"?)"), std::string::npos)
      << r.err;
}

TEST_F(SkillsCli, RacingFirstRunsInSeveralProcessesLeaveOneOwner) {
  constexpr int kRacers = 6;
  std::vector<fs::path> dirs;
  for (int i = 0; i < kRacers; ++i)
    dirs.push_back(fs::canonical(skill("racer" + std::to_string(i), "contested")));
  std::vector<pid_t> pids;
  for (int i = 0; i < kRacers; ++i) pids.push_back(start({"run", dirs[i].string()}, std::to_string(i)));
  int winners = 0;
  std::string winner;
  for (int i = 0; i < kRacers; ++i) {
    const Exec r = finish(pids[i], std::to_string(i));
    if (r.exit_code == 0) {
      ++winners;
      winner = dirs[i].string();
    } else {
      // Refused before the run (2, the owner was already written) or at its first data request (1:
      // PermissionDenied, when the racers started before any owner existed).
      EXPECT_TRUE(r.exit_code == 2 || r.exit_code == 1) << r.err;
      EXPECT_NE(r.err.find("skill id \"contested\" belongs to the folder"), std::string::npos) << r.err;
    }
  }
  EXPECT_EQ(winners, 1);
  EXPECT_EQ(read_bytes(data() / "bindings" / "contested"), "skillbox-owner 1\n" + winner + "\n");
}

}  // namespace
}  // namespace skillbox
