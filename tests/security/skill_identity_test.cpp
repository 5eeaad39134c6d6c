// Tests of the skill binding registry (state/binding_registry.h) through the public API and the runner: the
// data directory binds a skill id to one folder (docs/manifest.md "Identity", SECURITY-CASES "Identity").
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "capabilities/store/store_test_util.h"
#include "skill_fixture.h"
#include "skillbox/skillbox.h"
#include "state/data_layout.h"

namespace skillbox {
namespace {

namespace fs = std::filesystem;
using testing::read_bytes;
using testing::write_bytes;

/// A skill folder `dir` with id `id` whose default export reports weather's data: the store entry
/// "secret", the workspace file "note.txt" and the env value WEATHER_API_KEY. With `write`, it first
/// stores them.
void write_weather_skill(const fs::path& dir, const std::string& id, bool write) {
  fs::create_directories(dir);
  write_bytes(dir / "skill.json", R"({"id": ")" + id +
                                      R"(", "name": "W", "version": "1.0.0", "entry": "index.js",
        "permissions": {"fs": {"mode": "readwrite"}, "env": ["WEATHER_API_KEY"]}})");
  std::string body = "const fs = openhuman.fs;\nexport default async function () {\n";
  if (write) body += "  store.set('secret', 's3'); await fs.writeFile('note.txt', 'hello');\n";
  body += "  await fs.writeFile('ran-" + dir.filename().string() +
          "', 'x');\n"
          "  return [store.get('secret') ?? null, await fs.readFile('note.txt'),"
          " env.get('WEATHER_API_KEY') ?? null];\n}\n";
  write_bytes(dir / "index.js", body);
}

class SkillIdentity : public ::testing::Test {
 protected:
  fs::path data() const { return tmp_.path() / "data"; }
  HostOptions options() const {
    HostOptions o;
    o.data_dir = data();
    o.env = std::map<std::string, std::string>{{"WEATHER_API_KEY", "k-1"}};
    return o;
  }
  RunResult run(const fs::path& dir, const SkillLoadOptions& load = {}) {
    auto skill = Skill::load(dir, load);
    EXPECT_TRUE(skill) << skill.error().message;
    if (!skill) return {};
    testing::TestRunner runner(options());
    return runner.run({.skill = *skill, .export_name = "", .input_json = "null", .overrides = {}});
  }
  static std::string message(const RunResult& r) { return r.error ? r.error->message : std::string(); }
  fs::path ws() const { return data() / "skills" / "weather" / "workspace"; }

  testing::TempDir tmp_;
};

constexpr const char* kWeatherValue = R"(["s3","hello","k-1"])";

TEST_F(SkillIdentity, AnotherFolderClaimingTheIdCannotReadItsStoreWorkspaceOrEnvUntilRebound) {
  const fs::path weather = tmp_.path() / "weather", impostor = tmp_.path() / "impostor";
  write_weather_skill(weather, "weather", true);
  write_weather_skill(impostor, "weather", false);

  RunResult r = run(weather);
  ASSERT_EQ(r.outcome, Outcome::ok) << message(r);
  EXPECT_EQ(r.value_json, kWeatherValue);
  EXPECT_EQ(read_bytes(state::DataLayout(data()).owner_file("weather")),
            "skillbox-owner 1\n" + fs::canonical(weather).string() + "\n");

  r = run(impostor);
  EXPECT_EQ(r.outcome, Outcome::invalid);
  EXPECT_EQ(r.value_json, "");
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->name, "InvalidSkill");
  const std::string m = message(r);
  EXPECT_NE(m.find("skill id \"weather\" belongs to the folder \"" + fs::canonical(weather).string() + "\""),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("not to \"" + fs::canonical(impostor).string() + "\""), std::string::npos) << m;
  EXPECT_NE(m.find("skillbox skills rebind " + fs::canonical(impostor).string() +
                   " --id weather --data-dir " + data().string()),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("skillbox::rebind_skill"), std::string::npos) << m;
  EXPECT_FALSE(fs::exists(ws() / "ran-impostor")) << "the impostor's code never ran";
  EXPECT_EQ(r.usage.host_calls, 0u);

  // The operator hands the id over: now the new folder has weather's data, and the old one is refused.
  auto rebound = rebind_skill(options(), "weather", impostor);
  ASSERT_TRUE(rebound) << rebound.error().message;
  EXPECT_EQ(rebound->dir, fs::canonical(impostor));
  r = run(impostor);
  ASSERT_EQ(r.outcome, Outcome::ok) << message(r);
  EXPECT_EQ(r.value_json, kWeatherValue);
  r = run(weather);
  EXPECT_EQ(r.outcome, Outcome::invalid);
  EXPECT_NE(message(r).find("belongs to the folder \"" + fs::canonical(impostor).string() + "\""),
            std::string::npos)
      << message(r);
}

TEST_F(SkillIdentity, OtherIdsAreUnaffected) {
  const fs::path a = tmp_.path() / "a", b = tmp_.path() / "b";
  write_weather_skill(a, "weather", true);
  write_weather_skill(b, "other", true);
  EXPECT_EQ(run(a).outcome, Outcome::ok);
  const RunResult r = run(b);
  EXPECT_EQ(r.outcome, Outcome::ok) << message(r);
  EXPECT_EQ(run(a).outcome, Outcome::ok) << "the owner runs again and again";
}

TEST_F(SkillIdentity, AMovedFolderNeedsARebindAndKeepsItsData) {
  const fs::path before = tmp_.path() / "weather", after = tmp_.path() / "moved";
  write_weather_skill(before, "weather", true);
  ASSERT_EQ(run(before).outcome, Outcome::ok);
  const std::string old_path = fs::canonical(before).string();
  fs::rename(before, after);
  write_weather_skill(after, "weather", false);  // no longer writes: what it reads is the old data

  RunResult r = run(after);
  EXPECT_EQ(r.outcome, Outcome::invalid);
  EXPECT_NE(message(r).find("belongs to the folder \"" + old_path + "\" (which no longer exists)"),
            std::string::npos)
      << message(r);
  EXPECT_NE(message(r).find("skillbox skills rebind " + fs::canonical(after).string()), std::string::npos);

  ASSERT_TRUE(rebind_skill(options(), "weather", after));
  r = run(after);
  ASSERT_EQ(r.outcome, Outcome::ok) << message(r);
  EXPECT_EQ(r.value_json, kWeatherValue);
}

TEST_F(SkillIdentity, RacingFirstRunsMakeExactlyOneOwner) {
  constexpr int kRacers = 8;
  std::vector<fs::path> dirs;
  for (int i = 0; i < kRacers; ++i) {
    dirs.push_back(tmp_.path() / ("racer" + std::to_string(i)));
    fs::create_directories(dirs.back());
  }
  for (int round = 0; round < 5; ++round) {
    const std::string id = "race" + std::to_string(round);
    std::atomic<int> ready{0};
    std::vector<Result<SkillBinding>> results(kRacers, Error{"not run"});
    std::vector<std::thread> threads;
    for (int i = 0; i < kRacers; ++i) {
      threads.emplace_back([&, i] {
        ready.fetch_add(1);
        while (ready.load() < kRacers) std::this_thread::yield();
        results[i] = bind_skill(options(), id, dirs[i]);
      });
    }
    for (std::thread& t : threads) t.join();
    int winners = 0;
    fs::path owner;
    for (const auto& res : results) {
      if (res) {
        ++winners;
        owner = res->dir;
      }
    }
    ASSERT_EQ(winners, 1) << "round " << round;
    for (const auto& res : results) {
      if (res) continue;
      EXPECT_NE(res.error().message.find("belongs to the folder \"" + owner.string() + "\""),
                std::string::npos)
          << res.error().message;
    }
    EXPECT_EQ(read_bytes(state::DataLayout(data()).owner_file(id)),
              "skillbox-owner 1\n" + owner.string() + "\n");
    for (const auto& e : fs::directory_iterator(state::DataLayout(data()).bindings_dir())) {
      EXPECT_EQ(e.path().filename().string().front(), 'r') << "no temporary file is left behind";
    }
  }
}

TEST_F(SkillIdentity, ADamagedOwnerFileIsAClearErrorAndNeverRebindsSilently) {
  const fs::path weather = tmp_.path() / "weather";
  write_weather_skill(weather, "weather", true);
  const std::string canon = fs::canonical(weather).string();
  const std::map<std::string, std::string> bad = {
      {"empty", ""},
      {"no header", canon + "\n"},
      {"no newline", "skillbox-owner 1\n" + canon},
      {"relative", "skillbox-owner 1\nweather\n"},
      {"dot dot", "skillbox-owner 1\n" + canon + "/../weather\n"},
      {"two lines", "skillbox-owner 1\n" + canon + "\n/tmp\n"},
      {"nul", "skillbox-owner 1\n" + canon + std::string(1, '\0') + "x\n"},
      {"huge", "skillbox-owner 1\n/" + std::string(10000, 'a') + "\n"},
  };
  const fs::path file = state::DataLayout(data()).owner_file("weather");
  fs::create_directories(file.parent_path());
  for (const auto& [what, content] : bad) {
    write_bytes(file, content);
    const RunResult r = run(weather);
    EXPECT_EQ(r.outcome, Outcome::invalid) << what;
    EXPECT_NE(message(r).find("the owner file \"" + file.string() + "\" of skill id \"weather\" is damaged"),
              std::string::npos)
        << what << ": " << message(r);
    EXPECT_NE(message(r).find("skillbox skills rebind"), std::string::npos) << what;
    EXPECT_EQ(read_bytes(file), content) << what << ": left as found";
  }
  fs::remove(file);
  fs::create_symlink(tmp_.path() / "elsewhere", file);
  EXPECT_NE(message(run(weather)).find("is damaged (it is a symbolic link)"), std::string::npos);
  fs::remove(file);
  fs::create_directory(file);
  EXPECT_NE(message(run(weather)).find("is damaged (it is not a regular file)"), std::string::npos);
  fs::remove(file);

  write_bytes(file, "garbage");
  auto listed = skill_bindings(options());
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].id, "weather");
  EXPECT_NE((*listed)[0].problem.find("damaged"), std::string::npos);
  ASSERT_TRUE(rebind_skill(options(), "weather", weather)) << "rebinding repairs it";
  EXPECT_EQ(run(weather).outcome, Outcome::ok);
}

TEST_F(SkillIdentity, SymlinkedFoldersBindTheirCanonicalPath) {
  const fs::path weather = tmp_.path() / "real" / "weather", link = tmp_.path() / "link";
  write_weather_skill(weather, "weather", true);
  fs::create_directory_symlink(tmp_.path() / "real", link);
  ASSERT_EQ(run(link / "weather").outcome, Outcome::ok);
  EXPECT_EQ(read_bytes(state::DataLayout(data()).owner_file("weather")),
            "skillbox-owner 1\n" + fs::canonical(weather).string() + "\n");
  EXPECT_EQ(run(weather).outcome, Outcome::ok) << "the same folder by its real path";

  // A Skill built in code with a non-canonical path is checked by its canonical one too.
  auto loaded = Skill::load(weather);
  ASSERT_TRUE(loaded);
  testing::TestRunner runner(options());
  const RunResult r = runner.run({.skill = Skill(link / "." / "weather", loaded->manifest()),
                                  .export_name = "",
                                  .input_json = "null",
                                  .overrides = {}});
  EXPECT_EQ(r.outcome, Outcome::ok) << message(r);

  auto listed = skill_bindings(options());
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].dir, fs::canonical(weather));
  EXPECT_EQ((*listed)[0].problem, "");
}

TEST_F(SkillIdentity, AnEmbeddersExplicitIdIsBoundByTheSameRule) {
  const fs::path weather = tmp_.path() / "weather", other = tmp_.path() / "other";
  write_weather_skill(weather, "weather", true);
  write_weather_skill(other, "something-else", false);
  ASSERT_EQ(run(weather).outcome, Outcome::ok);

  auto loaded = Skill::load(other, {.id = "weather"});
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(loaded->manifest().id, "weather");
  RunResult r = run(other, {.id = "weather"});
  EXPECT_EQ(r.outcome, Outcome::invalid);
  EXPECT_NE(message(r).find("skill id \"weather\" belongs to the folder"), std::string::npos) << message(r);

  // The explicit id replaces the manifest's: this folder now owns "renamed", not "something-else".
  r = run(other, {.id = "renamed"});
  EXPECT_EQ(r.outcome, Outcome::error) << "runs (and finds no note.txt in its fresh workspace)";
  EXPECT_TRUE(fs::exists(state::DataLayout(data()).owner_file("renamed")));
  EXPECT_FALSE(fs::exists(state::DataLayout(data()).owner_file("something-else")));

  auto bad = Skill::load(other, {.id = "../weather"});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("the id \"../weather\" given by the host is not valid"),
            std::string::npos)
      << bad.error().message;
}

TEST_F(SkillIdentity, BindingChecksItsArguments) {
  auto r = bind_skill(options(), "Weather", tmp_.path());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("skill id \"Weather\" is not valid"), std::string::npos)
      << r.error().message;
  r = rebind_skill(options(), "weather", tmp_.path() / "missing");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("No such file or directory"), std::string::npos) << r.error().message;
  write_bytes(tmp_.path() / "file", "x");
  r = bind_skill(options(), "weather", tmp_.path() / "file");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("not a folder"), std::string::npos) << r.error().message;
  EXPECT_FALSE(fs::exists(state::DataLayout(data()).owner_file("weather")))
      << "nothing written for a refused binding";
  auto listed = skill_bindings(options());
  ASSERT_TRUE(listed);
  EXPECT_TRUE(listed->empty());
}

}  // namespace
}  // namespace skillbox
