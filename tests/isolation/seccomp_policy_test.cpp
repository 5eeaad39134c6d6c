// The seccomp policy table: well-formed, compiles for this architecture, holds the denials the
// worker wall depends on, and docs/isolation.md mirrors it row for row.
#include "isolation/seccomp_policy.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "isolation/seccomp.h"

namespace skillbox::isolation::testing {
namespace {

std::map<std::string, SyscallRule> rules_by_name() {
  std::map<std::string, SyscallRule> rules;
  for (const SyscallRule& rule : worker_syscall_policy()) rules.emplace(rule.name, rule);
  return rules;
}

TEST(IsolationSeccompPolicy, RowsAreWellFormedAndUnique) {
  std::set<std::string> seen;
  for (const SyscallRule& rule : worker_syscall_policy()) {
    EXPECT_TRUE(seen.insert(rule.name).second) << "duplicate row " << rule.name;
    EXPECT_NE(std::string(rule.reason), "") << rule.name;
    if (rule.action == SyscallAction::refuse) {
      EXPECT_GT(rule.error, 0) << rule.name;
    } else {
      EXPECT_EQ(rule.error, 0) << rule.name;
    }
    if (rule.condition != ArgCondition::none) {
      EXPECT_EQ(rule.action, SyscallAction::allow) << rule.name;
    }
  }
}

TEST(IsolationSeccompPolicy, WallDenialsArePresent) {
  const auto rules = rules_by_name();
  for (const char* name : {"socket",
                           "connect",
                           "execve",
                           "execveat",
                           "fork",
                           "vfork",
                           "clone",
                           "ptrace",
                           "io_uring_setup",
                           "io_uring_enter",
                           "io_uring_register",
                           "userfaultfd",
                           "memfd_create",
                           "bpf",
                           "perf_event_open",
                           "unshare",
                           "setns",
                           "mount",
                           "umount2",
                           "pivot_root",
                           "chroot",
                           "personality",
                           "process_vm_readv",
                           "process_vm_writev",
                           "kexec_load",
                           "kexec_file_load",
                           "keyctl",
                           "add_key",
                           "request_key",
                           "prctl",
                           "openat2",
                           "creat"}) {
    ASSERT_EQ(rules.count(name), 1u) << name;
    EXPECT_EQ(rules.at(name).action, SyscallAction::kill) << name;
  }
  for (const char* name : {"open", "openat"}) EXPECT_EQ(rules.at(name).action, SyscallAction::refuse) << name;
  EXPECT_EQ(rules.at("clone3").action, SyscallAction::refuse);
  EXPECT_EQ(rules.at("clone3").error, ENOSYS);
  EXPECT_EQ(rules.at("mmap").condition, ArgCondition::prot_without_exec);
  EXPECT_EQ(rules.at("mprotect").condition, ArgCondition::prot_without_exec);
}

TEST(IsolationSeccompPolicy, CompilesForThisArchitecture) {
  const Result<SeccompProgram> program = SeccompProgram::compile(worker_syscall_policy());
  ASSERT_TRUE(program.ok()) << describe(program.error());
  EXPECT_GT(program.value().instruction_count(), 0u);
}

TEST(IsolationSeccompPolicy, UnknownNameIsAnError) {
  const SyscallRule typo[] = {{"opennat", SyscallAction::allow, ArgCondition::none, 0, "typo"}};
  const Result<SeccompProgram> program = SeccompProgram::compile(typo);
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.error().step, Step::seccomp);
}

// docs/isolation.md's syscall table: rows "| `name` | action | ... |".
TEST(IsolationSeccompPolicy, DocsMirrorTheTable) {
  std::ifstream doc(std::string(SKILLBOX_SOURCE_DIR) + "/docs/isolation.md");
  ASSERT_TRUE(doc) << "docs/isolation.md";
  std::map<std::string, std::string> documented;
  std::string line;
  while (std::getline(doc, line)) {
    if (line.rfind("| `", 0) != 0) continue;
    const size_t name_end = line.find('`', 3);
    const size_t cell_end = line.find('|', name_end);
    const size_t action_end = line.find('|', cell_end + 1);
    if (name_end == std::string::npos || cell_end == std::string::npos || action_end == std::string::npos)
      continue;
    std::string action = line.substr(cell_end + 1, action_end - cell_end - 1);
    action.erase(0, action.find_first_not_of(' '));
    action.erase(action.find_last_not_of(' ') + 1);
    documented.emplace(line.substr(3, name_end - 3), action);
  }
  auto rules = rules_by_name();
  for (const SyscallRule& extra : sanitizer_syscall_rows()) rules.erase(extra.name);  // in the prose
  for (const auto& [name, rule] : rules) {
    ASSERT_EQ(documented.count(name), 1u) << name << " is missing from docs/isolation.md";
    std::string expected = action_name(rule.action);
    if (rule.action == SyscallAction::refuse) expected += " " + std::string(strerrorname_np(rule.error));
    expected += condition_text(rule.condition);
    EXPECT_EQ(documented.at(name), expected) << name;
  }
  for (const auto& [name, action] : documented)
    EXPECT_EQ(rules.count(name), 1u) << name << " is documented only";
}

}  // namespace
}  // namespace skillbox::isolation::testing
