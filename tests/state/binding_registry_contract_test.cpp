// The contract of state::BindingRegistry (state/binding_registry.h), for every implementation: a second
// backend joins by one INSTANTIATE_TEST_SUITE_P line with its factory.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "capabilities/store/store_test_util.h"
#include "pg/binding_registry.h"
#include "pg/pool.h"
#include "state/binding_registry.h"
#include "state/data_layout.h"
#include "support/postgres_test_db.h"

namespace skillbox::state {
namespace {

namespace fs = std::filesystem;

/// Makes a registry whose storage lives under `root` (a fresh empty folder per test); a second call
/// with the same root must see the same bindings (another process or a restart).
using RegistryFactory = std::function<std::shared_ptr<BindingRegistry>(const fs::path& root)>;

struct Backend {
  std::string name;
  RegistryFactory make;
};

class BindingRegistryContract : public ::testing::TestWithParam<Backend> {
 protected:
  BindingRegistryContract() {
    fs::create_directories(root() / "folders" / "one");
    fs::create_directories(root() / "folders" / "two");
  }
  [[nodiscard]] const fs::path& root() const { return dir_.path(); }
  [[nodiscard]] fs::path folder(const std::string& name) const { return root() / "folders" / name; }
  [[nodiscard]] std::shared_ptr<BindingRegistry> make() const { return GetParam().make(root() / "state"); }

  testing::TempDir dir_;
};

TEST_P(BindingRegistryContract, TheFirstBindingWinsAndAnotherFolderIsRefusedWithTheCommandThatRebinds) {
  auto registry = make();
  auto first = registry->bind("weather", folder("one"));
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first->dir, fs::canonical(folder("one")));
  EXPECT_TRUE(registry->check("weather", folder("one")));
  EXPECT_TRUE(registry->bind("weather", folder("one"))) << "binding the owner again changes nothing";
  auto other = registry->bind("weather", folder("two"));
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message.find("skillbox skills rebind"), std::string::npos) << other.error().message;
  EXPECT_FALSE(registry->check("weather", folder("two")));
}

TEST_P(BindingRegistryContract, CheckWritesNothingAndAnUnboundIdPasses) {
  auto registry = make();
  EXPECT_TRUE(registry->check("fresh", folder("one")));
  auto listed = registry->list();
  ASSERT_TRUE(listed) << listed.error().message;
  EXPECT_TRUE(listed->empty()) << "check() bound nothing";
}

TEST_P(BindingRegistryContract, RebindHandsTheIdToAnotherFolderAtomically) {
  auto registry = make();
  ASSERT_TRUE(registry->bind("weather", folder("one")));
  auto moved = registry->rebind("weather", folder("two"));
  ASSERT_TRUE(moved) << moved.error().message;
  EXPECT_TRUE(registry->check("weather", folder("two")));
  EXPECT_FALSE(registry->check("weather", folder("one")));
  // A new registry over the same storage (a restart, another process) sees the same owner.
  EXPECT_TRUE(make()->check("weather", folder("two")));
}

TEST_P(BindingRegistryContract, BadIdsAndMissingFoldersAreRefusedAndLeaveNoTrace) {
  auto registry = make();
  for (const std::string& id :
       std::vector<std::string>{"", "..", "a/b", "UPPER", std::string("nul\0id", 6), std::string(65, 'a')}) {
    auto bound = registry->bind(id, folder("one"));
    EXPECT_FALSE(bound) << "id " << id;
  }
  EXPECT_FALSE(registry->bind("weather", folder("missing")));
  auto listed = registry->list();
  ASSERT_TRUE(listed);
  EXPECT_TRUE(listed->empty());
}

TEST_P(BindingRegistryContract, ConcurrentFirstBindingsInThreadsAndProcessesMakeExactlyOneOwner) {
  for (const char* name : {"a", "b", "c", "d"}) fs::create_directories(folder(name));
  std::vector<pid_t> children;
  for (int i = 0; i < 3; ++i) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto bound = make()->bind("raced", folder("one"));
      _exit(bound ? 0 : 1);
    }
    children.push_back(pid);
  }
  // Threads only once every child is forked: a fork while another thread holds a lock (malloc's)
  // would leave the child stuck on it.
  std::vector<std::thread> threads;
  std::vector<int> won(4, 0);
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      auto registry = make();
      won[static_cast<size_t>(i)] =
          registry->bind("raced", folder(std::string(1, static_cast<char>('a' + i)))) ? 1 : 0;
    });
  }
  for (std::thread& t : threads) t.join();
  int process_wins = 0;
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    if (WEXITSTATUS(status) == 0) ++process_wins;
  }
  const int thread_wins = won[0] + won[1] + won[2] + won[3];
  // Exactly one folder owns the id; every caller with that folder succeeded, every other one failed.
  auto listed = make()->list();
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->size(), 1U);
  const fs::path owner = listed->front().dir;
  if (owner == fs::canonical(folder("one"))) {
    EXPECT_EQ(process_wins, 3);
    EXPECT_EQ(thread_wins, 0);
  } else {
    EXPECT_EQ(process_wins, 0);
    EXPECT_EQ(thread_wins, 1);
  }
}

TEST_P(BindingRegistryContract, AnOwnerRecordThatDiedHalfWrittenIsNeverSeen) {
  // A writer SIGKILLed at any point leaves no owner or a complete one: bind in a child and kill it
  // right away, many times; every outcome the parent reads is "no owner" or "owned by that folder".
  for (int round = 0; round < 20; ++round) {
    const std::string id = "kill-" + std::to_string(round);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      (void)make()->bind(id, folder("one"));
      _exit(0);
    }
    if (round % 2 == 0) ::kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    auto registry = make();
    EXPECT_TRUE(registry->check(id, folder("one"))) << "round " << round;
    auto listed = registry->list();
    ASSERT_TRUE(listed);
    for (const SkillBinding& b : *listed) EXPECT_TRUE(b.problem.empty()) << b.id << ": " << b.problem;
  }
}

INSTANTIATE_TEST_SUITE_P(Local, BindingRegistryContract,
                         ::testing::Values(Backend{"local",
                                                   [](const fs::path& root) {
                                                     return make_local_binding_registry(DataLayout(root));
                                                   }}),
                         [](const auto& param_info) { return param_info.param.name; });
// PostgreSQL (the test cluster of ctest's fixture `postgres`): each root is a tenant of its own.
INSTANTIATE_TEST_SUITE_P(Postgres, BindingRegistryContract,
                         ::testing::Values(Backend{"postgres",
                                                   [](const fs::path& root) {
                                                     return pg::make_pg_binding_registry(
                                                         pg::Pool::create(
                                                             skillbox::testing::migrated_postgres_url()),
                                                         skillbox::testing::postgres_tenant_for(root));
                                                   }}),
                         [](const auto& param_info) { return param_info.param.name; });

// ---- local specifics: what the owner file looks like on disk ----------------------------------------

TEST(LocalBindingRegistry, ADamagedOwnerFileIsReportedAndNeverReplacedByBind) {
  testing::TempDir dir;
  fs::create_directories(dir.path() / "skill");
  const DataLayout layout(dir.path() / "data");
  fs::create_directories(layout.bindings_dir());
  { std::ofstream(layout.owner_file("weather")) << "not an owner file"; }
  auto registry = make_local_binding_registry(layout);
  auto bound = registry->bind("weather", dir.path() / "skill");
  ASSERT_FALSE(bound);
  EXPECT_NE(bound.error().message.find("damaged"), std::string::npos) << bound.error().message;
  EXPECT_EQ(testing::read_bytes(layout.owner_file("weather")), "not an owner file") << "left untouched";
  auto listed = registry->list();
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->size(), 1U);
  EXPECT_FALSE(listed->front().problem.empty());
}

TEST(LocalBindingRegistry, WithoutADataDirectoryEveryCallSaysHowToSetOne) {
  auto registry = make_local_binding_registry(DataLayout(fs::path()));
  auto bound = registry->bind("weather", fs::temp_directory_path());
  ASSERT_FALSE(bound);
  EXPECT_NE(bound.error().message.find("SKILLBOX_HOME"), std::string::npos) << bound.error().message;
}

}  // namespace
}  // namespace skillbox::state
