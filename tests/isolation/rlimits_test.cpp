// Rlimits: the plan's arithmetic, and that an applied plan holds — memory beyond the budget is
// refused (private and shared), a file cannot grow. (Raising a limit again is a seccomp kill, see
// sandbox_test.cpp: root could otherwise raise hard limits.)
#include "isolation/rlimits.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/sanitizer.h"
#include "isolation/child_process.h"

namespace skillbox::isolation::testing {
namespace {

constexpr uint64_t kMiB = uint64_t{1024} * 1024;

TEST(IsolationRlimits, PlanAddsBaselineBudgetAndMargin) {
  const RlimitPlan plan = plan_worker_rlimits({32 * kMiB, 5000}, {100 * kMiB, 20 * kMiB}, 3);
  EXPECT_EQ(plan.address_space_bytes, 100 * kMiB + 32 * kMiB + kWorkerMemoryMarginBytes);
  EXPECT_EQ(plan.data_bytes, 20 * kMiB + 32 * kMiB + kWorkerMemoryMarginBytes);
  EXPECT_EQ(plan.cpu_seconds, 6u);  // 5 s + 1 s grace
  EXPECT_EQ(plan.open_files, 5u);   // fds 0..3 possible, plus one slot for the Landlock ruleset
  EXPECT_EQ(plan.file_size_bytes, 0u);
  EXPECT_EQ(plan.processes, 0u);
  EXPECT_EQ(plan.core_bytes, 0u);
}

TEST(IsolationRlimits, CpuSecondsRoundUpThenAddGrace) {
  EXPECT_EQ(plan_worker_rlimits({kMiB, 0}, {}, 0).cpu_seconds, 1u);
  EXPECT_EQ(plan_worker_rlimits({kMiB, 1}, {}, 0).cpu_seconds, 2u);
  EXPECT_EQ(plan_worker_rlimits({kMiB, 1000}, {}, 0).cpu_seconds, 2u);
  EXPECT_EQ(plan_worker_rlimits({kMiB, 1001}, {}, 0).cpu_seconds, 3u);
  EXPECT_EQ(plan_worker_rlimits({kMiB, 600000}, {}, 0).cpu_seconds, 601u);
}

TEST(IsolationRlimits, SumsSaturate) {
  const RlimitPlan plan = plan_worker_rlimits({UINT64_MAX, UINT64_MAX}, {UINT64_MAX, 1}, 0);
  static_assert(RLIM_INFINITY == UINT64_MAX);
  EXPECT_EQ(plan.address_space_bytes, RLIM_INFINITY);
  EXPECT_EQ(plan.data_bytes, RLIM_INFINITY);
  EXPECT_EQ(plan.cpu_seconds, UINT64_MAX / 1000 + 2);  // rounded up, plus grace: no wrap
}

TEST(IsolationRlimits, BaselineIsMeasured) {
  const Result<MemoryBaseline> baseline = measure_memory_baseline();
  ASSERT_TRUE(baseline.ok()) << describe(baseline.error());
  EXPECT_GT(baseline.value().address_space_bytes, baseline.value().data_bytes);
  EXPECT_GT(baseline.value().data_bytes, 0u);
}

TEST(IsolationRlimits, AppliedPlanHolds) {
  const ChildOutcome outcome = run_in_child([](int sock) {
    const Result<MemoryBaseline> baseline = measure_memory_baseline();
    if (!baseline) return 2;
    // A temporary file opened before the limits, as a worker never would: FSIZE 0 stops its growth.
    const int file = open("/tmp", O_TMPFILE | O_RDWR, 0600);
    if (file < 0) return 3;
    const int high = file > sock ? file : sock;
    const RlimitPlan plan = plan_worker_rlimits({16 * kMiB, 2500}, baseline.value(), high);
    if (const Status status = apply_rlimits(plan); !status) {
      send_text(sock, describe(status.error()));
      return 4;
    }
    std::string report;
    rlimit limit{};
    getrlimit(RLIMIT_CPU, &limit);
    report += "cpu=" + std::to_string(limit.rlim_cur) + "/" + std::to_string(limit.rlim_max) + " ";
    getrlimit(RLIMIT_CORE, &limit);
    report += "core=" + std::to_string(limit.rlim_max) + " ";
    getrlimit(RLIMIT_NPROC, &limit);
    report += "nproc=" + std::to_string(limit.rlim_max) + " ";
    getrlimit(RLIMIT_NOFILE, &limit);
    report += limit.rlim_max == static_cast<rlim_t>(high + 2) ? "nofile=ok " : "nofile=wrong ";
    // 256 MiB is far beyond 16 MiB + margin: refused up front, not after the pages are touched.
    // AddressSanitizer's allocator serves malloc from address space it reserved at start-up, before
    // any limit: there the mmap below is what shows the limit.
    if constexpr (base::kAddressSanitizer) {
      report += "malloc=untested ";
    } else {
      void* big = std::malloc(256 * kMiB);
      report += big == nullptr ? "malloc=refused " : "malloc=GRANTED ";
      std::free(big);
    }
    void* shared = mmap(nullptr, 256 * kMiB, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    report += shared == MAP_FAILED ? "shared=refused " : "shared=GRANTED ";
    void* small = std::malloc(4 * kMiB);
    report += small != nullptr ? "small=ok " : "small=REFUSED ";
    std::free(small);
    (void)signal(SIGXFSZ, SIG_IGN);  // fails only for an invalid signal number
    report += write(file, "x", 1) < 0 && errno == EFBIG ? "fsize=EFBIG" : "fsize=GREW";
    send_text(sock, report);
    return 0;
  });
  ASSERT_TRUE(outcome.exited) << signal_name(outcome.signal);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
  const std::string malloc_seen = base::kAddressSanitizer ? "malloc=untested" : "malloc=refused";
  EXPECT_EQ(outcome.output,
            "cpu=4/4 core=0 nproc=0 nofile=ok " + malloc_seen + " shared=refused small=ok fsize=EFBIG");
}

TEST(IsolationRlimits, NprocZeroStopsForkForUnprivilegedUsersOnly) {
  if (geteuid() == 0) {
    GTEST_SKIP() << "root ignores RLIMIT_NPROC (documented; seccomp kills fork/clone instead)";
  }
  const ChildOutcome outcome = run_in_child([](int sock) {
    const RlimitPlan plan = plan_worker_rlimits({64 * kMiB, 1000}, {UINT64_MAX / 4, UINT64_MAX / 4}, sock);
    if (!apply_rlimits(plan).ok()) return 2;
    const pid_t pid = fork();
    if (pid == 0) _exit(0);
    return pid < 0 && errno == EAGAIN ? 0 : 3;
  });
  EXPECT_TRUE(outcome.exited);
  EXPECT_EQ(outcome.exit_code, 0);
}

}  // namespace
}  // namespace skillbox::isolation::testing
