// bench/engine_bench.cpp — cost of a sandbox, as ratios against raw QuickJS measured in the same run.
//
//   ./build/bench/skillbox_bench                 all benchmarks, then a ratio summary
//   ./build/bench/skillbox_bench --benchmark_filter=Lifecycle
//
// Baselines (raw QuickJS, no skillbox code): a runtime + context with the same standard intrinsics as a
// skill's realm, `1+1` evaluated, everything freed; and fib(27) in such a context. The skillbox figures
// are whole invocations through InProcessRunner (thread hand-off, file read, fresh limited runtime, host
// API, module compile, export call, event loop, result JSON, teardown).
#include <benchmark/benchmark.h>
#include <quickjs.h>

#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "engine/realm.h"
#include "engine/reply_inbox.h"
#include "engine/session.h"
#include "runner/host_endpoint.h"
#include "runner/js_thread_pool.h"
#include "runner/skill_reader.h"
#include "skill_fixture.h"

namespace {

using skillbox::testing::TempSkill;

const char* kFibSource =
    "function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n"
    "export default () => fib(27);\n";
// The same function as a module binding (like the skill's), result left in a global for the check.
const char* kFibModule =
    "function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n"
    "globalThis.result = fib(27);\n";

// JS_NewContext adds the same standard intrinsics as engine::new_skill_context (which removes a few
// globals afterwards): the plain embedder's context.
JSContext* raw_context(JSRuntime* rt) {
  return JS_NewContext(rt);
}

void raw_eval(const char* source, const char* expect, bool module = false) {
  JSRuntime* rt = JS_NewRuntime();
  JSContext* ctx = raw_context(rt);
  JSValue v = JS_Eval(ctx, source, std::strlen(source), "bench.js",
                      module ? JS_EVAL_TYPE_MODULE : JS_EVAL_TYPE_GLOBAL);
  if (module) {
    JS_FreeValue(ctx, v);
    JSValue global = JS_GetGlobalObject(ctx);
    v = JS_GetPropertyStr(ctx, global, "result");
    JS_FreeValue(ctx, global);
  }
  int32_t got = 0;
  JS_ToInt32(ctx, &got, v);
  if (std::to_string(got) != expect) std::fprintf(stderr, "raw eval gave %d\n", got);
  JS_FreeValue(ctx, v);
  JS_FreeContext(ctx);
  JS_FreeRuntime(rt);
}

void BM_RawLifecycle(benchmark::State& state) {
  for (auto _ : state) raw_eval("1+1", "2");
}
BENCHMARK(BM_RawLifecycle)->MeasureProcessCPUTime()->Repetitions(5)->ReportAggregatesOnly(true);

void BM_RawFib27(benchmark::State& state) {
  for (auto _ : state) raw_eval(kFibModule, "196418", true);
}
BENCHMARK(BM_RawFib27)
    ->MeasureProcessCPUTime()
    ->Repetitions(5)
    ->ReportAggregatesOnly(true)
    ->Unit(benchmark::kMillisecond);

void run_skill(benchmark::State& state, skillbox::Runner& runner, const TempSkill& skill,
               const std::string& want) {
  skillbox::Invocation inv{.skill = skill.skill(), .export_name = "", .input_json = "null", .overrides = {}};
  for (auto _ : state) {
    skillbox::RunResult r = runner.run(inv);
    if (r.outcome != skillbox::Outcome::ok || r.value_json != want) {
      state.SkipWithError("unexpected result");
      break;
    }
  }
}

void BM_SkillboxInvocation(benchmark::State& state) {
  TempSkill skill({{"index.js", "export default () => 1 + 1;"}});
  skillbox::InProcessRunner runner;
  run_skill(state, runner, skill, "2");
}
BENCHMARK(BM_SkillboxInvocation)->MeasureProcessCPUTime()->Repetitions(5)->ReportAggregatesOnly(true);

void BM_SkillboxFib27(benchmark::State& state) {
  TempSkill skill({{"index.js", kFibSource}});
  skillbox::InProcessRunner runner;
  run_skill(state, runner, skill, "196418");
}
BENCHMARK(BM_SkillboxFib27)
    ->MeasureProcessCPUTime()
    ->Repetitions(5)
    ->ReportAggregatesOnly(true)
    ->Unit(benchmark::kMillisecond);

// The same invocation on a thread created for it (no pool): what the pool saves.
void BM_SkillboxInvocationFreshThread(benchmark::State& state) {
  TempSkill skill({{"index.js", "export default () => 1 + 1;"}});
  skillbox::Invocation inv{.skill = skill.skill(), .export_name = "", .input_json = "null", .overrides = {}};
  for (auto _ : state) {
    skillbox::engine::DeadlineFlag flag;
    skillbox::engine::SessionParams p;
    p.call = skillbox::engine::Call{
        .skill_id = "bench", .export_name = inv.export_name, .input_json = inv.input_json};
    p.limits = skill.manifest().limits;
    p.deadline = skillbox::engine::Clock::now() + std::chrono::seconds(5);
    p.deadline_flag = &flag;
    skillbox::engine::SessionResult r;
    skillbox::runner::JsThreadPool::run_on_fresh_thread([&] {
      // What the in-process runner does on its thread: read the sources, compose the host, run.
      auto sources = skillbox::runner::read_skill_sources(skill.dir(), "index.js", p.limits);
      if (!sources) return;
      p.sources = std::move(*sources);
      skillbox::engine::ReplyInbox inbox;
      skillbox::runner::InvocationContext context;
      context.skill_id = "bench";
      skillbox::runner::HostEndpoint endpoint(std::move(context), inbox);
      r = skillbox::engine::run_session(std::move(p), endpoint, inbox);
    });
    if (r.value_json != "2") {
      state.SkipWithError("unexpected result");
      break;
    }
  }
}
BENCHMARK(BM_SkillboxInvocationFreshThread)
    ->MeasureProcessCPUTime()
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);

// Thread hand-off alone: pool vs a new 8 MiB thread per call.
void BM_ThreadPoolHandoff(benchmark::State& state) {
  skillbox::runner::JsThreadPool pool(2);
  for (auto _ : state) {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    pool.submit([&] {
      std::lock_guard<std::mutex> l(m);
      done = true;
      cv.notify_one();
    });
    std::unique_lock<std::mutex> l(m);
    cv.wait(l, [&] { return done; });
  }
}
BENCHMARK(BM_ThreadPoolHandoff)->MeasureProcessCPUTime()->Repetitions(5)->ReportAggregatesOnly(true);

void BM_ThreadPerCall(benchmark::State& state) {
  for (auto _ : state) skillbox::runner::JsThreadPool::run_on_fresh_thread([] {});
}
BENCHMARK(BM_ThreadPerCall)->MeasureProcessCPUTime()->Repetitions(5)->ReportAggregatesOnly(true);

// Bytes per live sandbox: heap of a fresh raw runtime+context vs a skill's runtime at its peak.
void BM_BytesPerSandbox(benchmark::State& state) {
  JSMemoryUsage usage{};
  for (auto _ : state) {
    JSRuntime* rt = JS_NewRuntime();
    JSContext* ctx = raw_context(rt);
    JS_ComputeMemoryUsage(rt, &usage);
    JS_FreeContext(ctx);
    JS_FreeRuntime(rt);
  }
  state.counters["raw_bytes"] = static_cast<double>(usage.malloc_size);

  TempSkill skill({{"index.js", "export default () => 1 + 1;"}});
  skillbox::InProcessRunner runner;
  skillbox::Invocation inv{.skill = skill.skill(), .export_name = "", .input_json = "null", .overrides = {}};
  state.counters["skillbox_bytes"] = static_cast<double>(runner.run(inv).usage.heap_peak_bytes);
}
BENCHMARK(BM_BytesPerSandbox)->Iterations(10);

// Collects the mean real time per iteration of each benchmark for the ratio summary.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      // Repeated benchmarks are summarized by their median; single runs by themselves.
      if (r.iterations == 0) continue;
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name != "median") continue;
      std::string name = r.run_name.str();
      if (auto at = name.find('/'); at != std::string::npos) name.erase(at);  // drop "/repeats:5/..."
      const double unit = benchmark::GetTimeUnitMultiplier(r.time_unit);
      seconds[name] = r.GetAdjustedCPUTime() / unit;
      real[name] = r.GetAdjustedRealTime() / unit;
      for (const auto& [k, c] : r.counters) counters[name + "." + k] = c.value;
    }
  }
  std::map<std::string, double> seconds;  // CPU time of the whole process (all threads)
  std::map<std::string, double> real;
  std::map<std::string, double> counters;
};

void print_ratio(const RatioReporter& rep, const char* label, const std::string& num, const std::string& den,
                 const char* target) {
  auto n = rep.seconds.find(num), d = rep.seconds.find(den);
  if (n == rep.seconds.end() || d == rep.seconds.end() || d->second <= 0) return;
  const double rn = rep.real.at(num), rd = rep.real.at(den);
  std::printf("%-48s cpu %9.1f / %9.1f us = %5.2fx  (wall %5.2fx)  %s\n", label, n->second * 1e6,
              d->second * 1e6, n->second / d->second, rn / rd, target);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();

  std::printf(
      "\nRatios against raw QuickJS measured in this run (median of 5; process CPU time of all threads,\n"
      "wall-clock ratio beside it):\n");
  print_ratio(reporter, "invocation (trivial skill) / raw lifecycle", "BM_SkillboxInvocation",
              "BM_RawLifecycle", "(target <= 1.5x)");
  print_ratio(reporter, "invocation on a fresh thread / raw lifecycle", "BM_SkillboxInvocationFreshThread",
              "BM_RawLifecycle", "");
  print_ratio(reporter, "fib(27) with all limits / raw fib(27)", "BM_SkillboxFib27", "BM_RawFib27",
              "(target < 1.05x)");
  print_ratio(reporter, "new thread per call / pool hand-off", "BM_ThreadPerCall", "BM_ThreadPoolHandoff",
              "");
  auto raw = reporter.counters.find("BM_BytesPerSandbox.raw_bytes");
  auto sb = reporter.counters.find("BM_BytesPerSandbox.skillbox_bytes");
  if (raw != reporter.counters.end() && sb != reporter.counters.end())
    std::printf("%-52s %8.0f B  / %8.0f B  = %5.2fx\n", "bytes per live sandbox / raw runtime+context",
                sb->second, raw->second, sb->second / raw->second);
  return 0;
}
