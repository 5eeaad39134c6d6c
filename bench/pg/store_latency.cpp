// bench/pg/store_latency.cpp — the store's get and set on PostgreSQL against the embedded SQLite
// backend, measured in the same run (bench/pg/run.sh starts the cluster; docs/benchmarks.md "The store
// on PostgreSQL").
//
//   bench_pg_store_latency POSTGRES_URL DATA_DIR [OPS]
//
// Both backends are used through the state layer's interface (state::StoreBackend), as an invocation
// uses them: one session per skill, then OPS operations (default 2000) of each kind, keys k0..k99
// cycling, a 40-byte JSON value. The two backends alternate operation by operation, so that load on
// the machine falls on both alike. "open+get" opens a session and reads one key, which is what every
// invocation that touches the store pays once. Prints one line per operation: p50 and p99 of each
// backend in microseconds, and the ratio PostgreSQL / SQLite of the p50s; then sets per second with 8
// writers at once on each backend.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "pg/pool.h"
#include "pg/store_backend.h"
#include "state/data_layout.h"
#include "state/store_backend.h"

namespace {

using Clock = std::chrono::steady_clock;
using skillbox::StoreOpenOptions;
using skillbox::StorePolicy;

[[noreturn]] void fail(const std::string& what) {
  (void)std::fprintf(stderr, "bench_pg_store_latency: %s\n", what.c_str());
  std::exit(1);
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

std::unique_ptr<skillbox::state::StoreSession> open(skillbox::state::StoreBackend& backend,
                                                    const std::string& skill = "bench") {
  auto s = backend.open_skill(skill, StorePolicy{}, StoreOpenOptions{});
  if (!s) fail("opening the store: " + s.error().message);
  return std::move(*s);
}

struct Side {
  std::shared_ptr<skillbox::state::StoreBackend> backend;
  std::unique_ptr<skillbox::state::StoreSession> session;
  std::vector<double> us;
};

/// `ops` rounds of `op` on each side, alternating; returns nothing, fills each side's `us`.
void measure(Side& a, Side& b, int ops, const std::function<void(Side&, int)>& op) {
  a.us.clear();
  b.us.clear();
  for (int i = 0; i < ops; ++i) {
    for (Side* s : {&a, &b}) {
      const auto t0 = Clock::now();
      op(*s, i);
      s->us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
  }
}

void report(const char* name, const Side& sqlite, const Side& pg) {
  const double s50 = percentile(sqlite.us, 0.5), p50 = percentile(pg.us, 0.5);
  std::printf("%-9s sqlite p50 %8.1f us  p99 %8.1f us | postgres p50 %8.1f us  p99 %8.1f us | ratio %.2fx\n",
              name, s50, percentile(sqlite.us, 0.99), p50, percentile(pg.us, 0.99), p50 / s50);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) fail("usage: bench_pg_store_latency POSTGRES_URL DATA_DIR [OPS]");
  const std::string url = argv[1];
  const std::filesystem::path data = argv[2];
  const int ops = argc > 3 ? std::atoi(argv[3]) : 2000;
  if (ops < 10) fail("OPS must be at least 10");

  Side sqlite{skillbox::state::make_local_store_backend(skillbox::state::DataLayout(data)), nullptr, {}};
  Side pg{skillbox::pg::make_pg_store_backend(skillbox::pg::Pool::create(url),
                                              "bench-" + std::to_string(::getpid())),
          nullptr,
          {}};
  sqlite.session = open(*sqlite.backend);
  pg.session = open(*pg.backend);
  const auto key = [](int i) { return "k" + std::to_string(i % 100); };
  const std::string value = R"({"v":12345,"s":"payload-0123456789abcd"})";

  // Warm up: fill the keys, so that every get finds one and every set replaces one.
  measure(sqlite, pg, 100, [&](Side& s, int i) {
    if (!s.session->set(key(i), value)) fail("warm-up set");
  });
  measure(sqlite, pg, ops, [&](Side& s, int i) {
    if (!s.session->set(key(i), value)) fail("set");
  });
  report("set", sqlite, pg);
  measure(sqlite, pg, ops, [&](Side& s, int i) {
    auto got = s.session->get(key(i));
    if (!got || !*got) fail("get");
  });
  report("get", sqlite, pg);
  measure(sqlite, pg, ops, [&](Side& s, int i) {
    auto fresh = open(*s.backend);
    auto got = fresh->get(key(i));
    if (!got || !*got) fail("open+get");
  });
  report("open+get", sqlite, pg);

  // Throughput: 8 threads, each with its own session and its own keys, writing for 2 s; first SQLite,
  // then PostgreSQL (each has the machine to itself). All on one skill: writes of one skill are
  // serialized (on PostgreSQL by the lock on the skill's store_usage row, held through the commit);
  // then each on a skill of its own, where PostgreSQL's writers proceed in parallel and share WAL
  // flushes (group commit), while SQLite's still take turns on one file.
  const auto throughput = [&](skillbox::state::StoreBackend& backend, bool own_skill) {
    std::atomic<long> done{0};
    const auto until = Clock::now() + std::chrono::seconds(2);
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&, t] {
        auto session = open(backend, own_skill ? "bench-" + std::to_string(t) : "bench");
        for (int i = 0; Clock::now() < until; ++i) {
          if (!session->set("t" + std::to_string(t) + "-" + std::to_string(i % 50), value))
            fail("concurrent set");
          ++done;
        }
      });
    }
    for (std::thread& th : threads) th.join();
    return static_cast<double>(done.load()) / 2.0;
  };
  for (const bool own : {false, true}) {
    const double sqlite_sets = throughput(*sqlite.backend, own);
    const double pg_sets = throughput(*pg.backend, own);
    std::printf("sets/s, 8 writers on %s: sqlite %.0f | postgres %.0f | ratio %.2fx\n",
                own ? "8 skills   " : "one skill  ", sqlite_sets, pg_sets, pg_sets / sqlite_sets);
  }
  return 0;
}
