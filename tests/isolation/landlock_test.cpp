// Landlock: the ABI probe, the rights each ABI handles, and that a no-rights domain refuses every
// path — on this kernel, for a ruleset built for each ABI from 1 (Debian 12's 6.1 has 2) upward.
#include "isolation/landlock.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>

#include "isolation/child_process.h"

namespace skillbox::isolation::testing {
namespace {

TEST(IsolationLandlock, ProbeReportsTheAbi) {
  const Result<int> abi = probe_landlock_abi();
  ASSERT_TRUE(abi.ok()) << describe(abi.error());
  EXPECT_GE(abi.value(), 1);
  std::printf("Landlock ABI of this kernel: %d (newest known here: %d)\n", abi.value(),
              kNewestKnownLandlockAbi);
}

TEST(IsolationLandlock, RightsGrowWithTheAbi) {
  constexpr uint64_t kAbi1Fs = (1ULL << 13) - 1;
  EXPECT_EQ(landlock_rights_for_abi(0).fs, 0u);
  EXPECT_EQ(landlock_rights_for_abi(1).fs, kAbi1Fs);
  EXPECT_EQ(landlock_rights_for_abi(2).fs, kAbi1Fs | 1ULL << 13);  // refer
  EXPECT_EQ(landlock_rights_for_abi(3).fs, kAbi1Fs | 3ULL << 13);  // + truncate
  EXPECT_EQ(landlock_rights_for_abi(3).net, 0u);
  EXPECT_EQ(landlock_rights_for_abi(4).net, 3u);  // bind_tcp, connect_tcp
  EXPECT_EQ(landlock_rights_for_abi(4).fs, kAbi1Fs | 3ULL << 13);
  EXPECT_EQ(landlock_rights_for_abi(5).fs, kAbi1Fs | 7ULL << 13);  // + ioctl_dev
  EXPECT_EQ(landlock_rights_for_abi(5).scoped, 0u);
  EXPECT_EQ(landlock_rights_for_abi(6).scoped, 3u);  // abstract unix sockets, signals
  const LandlockRights v7 = landlock_rights_for_abi(7);
  const LandlockRights future = landlock_rights_for_abi(42);
  EXPECT_EQ(future.fs, v7.fs);
  EXPECT_EQ(future.net, v7.net);
  EXPECT_EQ(future.scoped, v7.scoped);
}

TEST(IsolationLandlock, MissingLandlockFailsClosedWithTheOptIn) {
  const Error error{Step::landlock, ENOSYS, "the kernel has no Landlock", true};
  const std::string message = describe(error);
  EXPECT_NE(message.find("landlock"), std::string::npos) << message;
  EXPECT_NE(message.find("--isolation=inprocess"), std::string::npos) << message;
  EXPECT_EQ(describe(Error{Step::seccomp, EPERM, "seccomp", false}).find("--isolation"), std::string::npos);
}

// After restrict_self, no path opens: read, directory listing, create, /proc, mkdir.
std::string try_paths() {
  std::string report;
  auto note = [&](const char* what, bool failed) {
    report += what;
    report += failed ? (errno == EACCES ? "=EACCES " : "=errno" + std::to_string(errno) + " ") : "=OPENED ";
  };
  note("read", open("/etc/passwd", O_RDONLY) < 0);
  note("dir", opendir("/") == nullptr);
  note("proc", open("/proc/self/status", O_RDONLY) < 0);
  note("create", open("/tmp/skillbox-landlock-probe", O_CREAT | O_WRONLY, 0600) < 0);
  note("mkdir", mkdir("/tmp/skillbox-landlock-dir", 0700) != 0);
  return report;
}

constexpr const char* kAllRefused = "read=EACCES dir=EACCES proc=EACCES create=EACCES mkdir=EACCES ";

TEST(IsolationLandlock, NoPathOpensAfterRestrictSelfForEveryAbi) {
  const Result<int> abi = probe_landlock_abi();
  ASSERT_TRUE(abi.ok()) << describe(abi.error());
  for (int version = 1; version <= abi.value() && version <= kNewestKnownLandlockAbi; ++version) {
    const ChildOutcome outcome = run_in_child([version](int sock) {
      if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return 2;
      if (const Status status = landlock_restrict_self_no_rights(version); !status) {
        send_text(sock, describe(status.error()));
        return 3;
      }
      send_text(sock, try_paths());
      return 0;
    });
    ASSERT_TRUE(outcome.exited) << "ABI " << version;
    EXPECT_EQ(outcome.exit_code, 0) << "ABI " << version << ": " << outcome.output;
    EXPECT_EQ(outcome.output, kAllRefused) << "ruleset for ABI " << version;
  }
}

TEST(IsolationLandlock, WithoutLandlockThePathsOpen) {
  // The control: the same probes succeed in a child without the domain (so the test above proves
  // Landlock refused them, not the environment).
  const ChildOutcome outcome = run_in_child([](int sock) {
    std::string report;
    report += open("/etc/passwd", O_RDONLY) >= 0 ? "read " : "no-read ";
    report += opendir("/") != nullptr ? "dir" : "no-dir";
    send_text(sock, report);
    return 0;
  });
  EXPECT_EQ(outcome.output, "read dir");
}

}  // namespace
}  // namespace skillbox::isolation::testing
