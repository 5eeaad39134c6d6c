// bench/worker_bench.cpp — a trivial skill through WorkerRunner (warm pool) against InProcessRunner,
// both measured in the same run, with the ratios.
//
//   ./build/bench/skillbox_bench --benchmark_filter=WorkerVsInProcess
//
// Latency: sequential invocations from one thread (p50, p99). Throughput: two caller threads for a
// fixed number of invocations (invocations per second). Targets (issue 10): worker p50 <= in-process
// p50 + 250 us, and >= 2,000 worker invocations per second on two cores; issue 30: + 150 us and 5,000.
// The machine's own price of a process, measured first in the same run: the p50 of fork(), _exit(0)
// in the child and waitpid() by this (still small) process. Every worker invocation pays at least one;
// on a guest whose page tables the hypervisor maintains it is hundreds of microseconds.
//
//   ./build/bench/skillbox_bench --benchmark_filter=WorkerMixedLimits
//
// Mixed traffic: p50 of invocations alternating between two limit sets against one limit set (issue
// 26: within 10 %).
#include <benchmark/benchmark.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <thread>
#include <vector>

#include "skill_fixture.h"

namespace {

using Clock = std::chrono::steady_clock;
using skillbox::Invocation;
using skillbox::Outcome;
using skillbox::Runner;
using skillbox::testing::TempSkill;

struct Figures {
  double p50_us = 0;
  double p99_us = 0;
  double per_second = 0;
  int failures = 0;
};

Figures measure(Runner& runner, const TempSkill& skill, int latency_runs, int throughput_runs) {
  Figures f;
  const Invocation inv{.skill = skill.skill(), .input_json = "1"};
  for (int i = 0; i < 100; ++i) f.failures += runner.run(inv).outcome == Outcome::ok ? 0 : 1;  // warm up
  std::vector<double> us;
  us.reserve(static_cast<size_t>(latency_runs));
  for (int i = 0; i < latency_runs; ++i) {
    const auto t0 = Clock::now();
    const bool ok = runner.run(inv).outcome == Outcome::ok;
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    f.failures += ok ? 0 : 1;
  }
  std::sort(us.begin(), us.end());
  f.p50_us = us[us.size() / 2];
  f.p99_us = us[us.size() * 99 / 100];
  std::atomic<int> next{0};
  std::atomic<int> failures{0};
  const auto t0 = Clock::now();
  std::vector<std::thread> callers;
  for (int t = 0; t < 2; ++t) {
    callers.emplace_back([&] {
      while (next.fetch_add(1) < throughput_runs) {
        if (runner.run(inv).outcome != Outcome::ok) ++failures;
      }
    });
  }
  for (auto& c : callers) c.join();
  f.per_second = throughput_runs / std::chrono::duration<double>(Clock::now() - t0).count();
  f.failures += failures.load();
  return f;
}

/// p50 of fork() + _exit(0) + waitpid() of this process, in microseconds.
double bare_process_p50_us(int runs) {
  std::vector<double> us;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = Clock::now();
    const pid_t pid = fork();
    if (pid == 0) _exit(0);
    if (pid < 0) continue;
    int status = 0;
    waitpid(pid, &status, 0);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  if (us.empty()) return 0;
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

void BM_WorkerVsInProcess(benchmark::State& state) {
  TempSkill skill({{"index.js", "export default (x) => x + 1"}});
  Figures in_process;
  Figures worker;
  double bare_process_us = 0;
  for (auto _ : state) {
    bare_process_us = bare_process_p50_us(200);
    {
      skillbox::InProcessRunner runner;
      in_process = measure(runner, skill, 2000, 4000);
    }
    {
      skillbox::HostOptions o;
#ifdef SKILLBOX_WORKER_PATH
      o.worker_path = SKILLBOX_WORKER_PATH;
#endif
      o.worker_pool_size = 4;
      skillbox::WorkerRunner runner(o);
      worker = measure(runner, skill, 2000, 4000);
    }
  }
  state.counters["inproc_p50_us"] = in_process.p50_us;
  state.counters["inproc_p99_us"] = in_process.p99_us;
  state.counters["inproc_per_s"] = in_process.per_second;
  state.counters["worker_p50_us"] = worker.p50_us;
  state.counters["worker_p99_us"] = worker.p99_us;
  state.counters["worker_per_s"] = worker.per_second;
  state.counters["p50_extra_us"] = worker.p50_us - in_process.p50_us;
  state.counters["throughput_ratio"] = worker.per_second / in_process.per_second;
  state.counters["failures"] = in_process.failures + worker.failures;
  state.counters["bare_process_p50_us"] = bare_process_us;
  std::printf(
      "worker vs in-process: p50 %.0f vs %.0f us (+%.0f us, target +150), p99 %.0f vs %.0f us, %.0f vs %.0f "
      "inv/s (ratio %.2f, target >= 5000 inv/s)\n"
      "a bare fork + exit + wait on this machine: p50 %.0f us; worker p50 %.2fx that\n",
      worker.p50_us, in_process.p50_us, worker.p50_us - in_process.p50_us, worker.p99_us, in_process.p99_us,
      worker.per_second, in_process.per_second, worker.per_second / in_process.per_second, bare_process_us,
      bare_process_us > 0 ? worker.p50_us / bare_process_us : 0.0);
}
BENCHMARK(BM_WorkerVsInProcess)->Iterations(1)->Unit(benchmark::kMillisecond);

// One kind of invocation of a mixed workload: a skill (its limits) run as a tenant (null: the default).
struct Turn {
  const TempSkill* skill;
  std::shared_ptr<const skillbox::TenantContext> tenant;
};

// p50 of `runs` sequential invocations that take turns through `turns` (one turn: a single limit set).
double p50_taking_turns(Runner& runner, const std::vector<Turn>& turns, int runs, int& failures) {
  std::vector<Invocation> invocations;
  for (const Turn& turn : turns) {
    Invocation inv{.skill = turn.skill->skill(), .input_json = "1"};
    inv.tenant = turn.tenant;
    invocations.push_back(std::move(inv));
  }
  for (int i = 0; i < 100; ++i)  // warm up
    failures +=
        runner.run(invocations[static_cast<size_t>(i) % invocations.size()]).outcome == Outcome::ok ? 0 : 1;
  std::vector<double> us;
  us.reserve(static_cast<size_t>(runs));
  for (int i = 0; i < runs; ++i) {
    const auto t0 = Clock::now();
    const bool ok =
        runner.run(invocations[static_cast<size_t>(i) % invocations.size()]).outcome == Outcome::ok;
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    failures += ok ? 0 : 1;
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

// Mixed traffic against the pool: invocations alternating between two limit sets (memory and timeout)
// and two tenants (each with its own data directory) against one limit set and the default tenant, in
// the same run, each on a fresh WorkerRunner with a warm pool. Goal (issue
// 26): the alternating p50 within 10 % of the single-limit p50 (a pool keyed by one limit set emptied
// itself on every switch and forked on the caller's path).
void BM_WorkerMixedLimits(benchmark::State& state) {
  TempSkill small({{"index.js", "export default (x) => x + 1"}});
  small.manifest().limits.memory_bytes = 32ull * 1024 * 1024;
  small.manifest().limits.timeout_ms = 5'000;
  TempSkill large({{"index.js", "export default (x) => x + 1"}});
  large.manifest().limits.memory_bytes = 256ull * 1024 * 1024;
  large.manifest().limits.timeout_ms = 30'000;
  skillbox::HostOptions o;
#ifdef SKILLBOX_WORKER_PATH
  o.worker_path = SKILLBOX_WORKER_PATH;
#endif
  o.worker_pool_size = 4;
  const std::filesystem::path data = std::filesystem::temp_directory_path() / "skillbox-bench-tenants";
  const auto tenant_a = skillbox::local_tenant("a", data / "a");
  const auto tenant_b = skillbox::local_tenant("b", data / "b");
  double single = 0;
  double mixed = 0;
  int failures = 0;
  for (auto _ : state) {
    // Interleaved, three rounds each, the best p50 of each kept: the machine's noise is larger than the
    // effect looked for.
    single = mixed = 1e18;
    for (int round = 0; round < 3; ++round) {
      {
        skillbox::WorkerRunner runner(o);
        single = std::min(single, p50_taking_turns(runner, {{&small, nullptr}}, 1000, failures));
      }
      {
        skillbox::WorkerRunner runner(o);
        mixed = std::min(mixed,
                         p50_taking_turns(runner, {{&small, tenant_a}, {&large, tenant_b}}, 1000, failures));
      }
    }
  }
  state.counters["single_p50_us"] = single;
  state.counters["mixed_p50_us"] = mixed;
  state.counters["mixed_ratio"] = mixed / single;
  state.counters["failures"] = failures;
  std::error_code ec;
  std::filesystem::remove_all(data, ec);
  std::printf(
      "worker, two limit sets and two tenants taking turns vs one: p50 %.0f vs %.0f us (ratio %.2f, goal <= "
      "1.10)\n",
      mixed, single, mixed / single);
}
BENCHMARK(BM_WorkerMixedLimits)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
