// bench/peers/peer_skillbox.cpp — skillbox as an embedder uses it: the public C++ API only
// (skillbox/skillbox.h). Skill::load once, then Runner::run per timed iteration, with the default limits
// of a manifest (32 MiB heap, 10 M steps, 512 KiB stack, 5 s deadline) and the whole host API.
//
//   peer_skillbox in-process|worker WORKLOAD_FILE W1|W2|W3 ITERATIONS   wall-clock and process CPU
//                                                                       microseconds per iteration, and
//                                                                       minor page faults (this process's,
//                                                                       and its descendants': worker mode's
//                                                                       zygote and its reaped workers)
//   peer_skillbox in-process|worker WORKLOAD_FILE W4 SANDBOXES          resident bytes per live sandbox
//
// Exit status 3 means "skipped" (the mode is not available here), with the reason on stderr.
//
// Worker mode needs WorkerRunner in the public API. CMake defines SKILLBOX_PEERS_HAVE_WORKER_RUNNER when
// include/skillbox/skillbox.h declares it (bench/peers/CMakeLists.txt); without it this mode is skipped.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "skillbox/skillbox.h"

namespace {

constexpr int kSkipped = 3;
// W4: how long each live sandbox waits on a timer, and when (after the launch) resident memory is read.
constexpr std::chrono::milliseconds kHold{4000};
constexpr std::chrono::milliseconds kSampleAt{2500};

struct Workload {
  std::string body;
  std::string expect;
};

bool read_workload(const char* path, Workload& w) {
  std::ifstream in(path);
  if (!in) return false;
  std::stringstream text;
  text << in.rdbuf();
  w.body = text.str();
  const std::string tag = "// expect: ";
  const auto at = w.body.find(tag);
  if (at == std::string::npos) return false;
  const auto end = w.body.find('\n', at);
  w.expect = w.body.substr(at + tag.size(), end - at - tag.size());
  return true;
}

bool write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  return static_cast<bool>(out);
}

double process_cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

// Field `index` (1-based, as in proc(5)) of /proc/PID/stat; 0 if it cannot be read.
long stat_field(const std::string& pid, int index) {
  std::ifstream in("/proc/" + pid + "/stat");
  std::string text;
  std::getline(in, text);
  const auto close = text.rfind(')');  // the command name may hold spaces
  if (close == std::string::npos) return 0;
  std::istringstream rest(text.substr(close + 2));
  std::string field;
  for (int i = 3; i <= index && rest >> field; ++i)
    if (i == index) return std::atol(field.c_str());
  return 0;
}

// Minor page faults of this process so far (a system call: cheap enough to take per iteration).
long own_minor_faults() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

// Minor page faults of this process's children, with their reaped children (a worker runner's zygote
// counts its workers once it has waited for them: cminflt). Reads /proc: taken only twice per loop,
// so that it does not slow the iterations it measures.
long children_minor_faults() {
  long total = 0;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream children(task.path() / "children");
    std::string pid;
    while (children >> pid) total += stat_field(pid, 10) + stat_field(pid, 11);
  }
  return total;
}

long resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  long size = 0, resident = 0;
  statm >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

std::unique_ptr<skillbox::Runner> make_runner(const std::string& mode, const skillbox::HostOptions& options) {
  if (mode == "in-process") return std::make_unique<skillbox::InProcessRunner>(options);
#ifdef SKILLBOX_PEERS_HAVE_WORKER_RUNNER
  if (mode == "worker") {
    if (auto supported = skillbox::WorkerRunner::check_support(options); !supported) {
      std::fprintf(stderr, "worker mode unavailable here: %s\n", supported.error().message.c_str());
      return nullptr;
    }
    return std::make_unique<skillbox::WorkerRunner>(options);
  }
#else
  if (mode == "worker") {
    std::fprintf(stderr, "WorkerRunner is not in this build's public API yet (bench/peers/CMakeLists.txt)\n");
    return nullptr;
  }
#endif
  std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
  return nullptr;
}

// Runs the workload `count` times (or, for W4, `count` invocations at once) and prints the figures.
int run(const std::string& mode, const std::filesystem::path& root, const std::filesystem::path& dir,
        const Workload& w, const char* file, int count, bool hold) {
  skillbox::HostOptions options;
  options.data_dir = root / "data";
  options.env = std::map<std::string, std::string>{};
#ifdef SKILLBOX_PEERS_HAVE_WORKER_RUNNER
  if (const char* worker = std::getenv("SKILLBOX_PEERS_WORKER")) options.worker_path = worker;
#endif
  auto skill = skillbox::Skill::load(dir);
  if (!skill) {
    std::fprintf(stderr, "peer_skillbox: %s\n", skill.error().message.c_str());
    return 2;
  }
  auto runner = make_runner(mode, options);
  if (!runner) return kSkipped;
  const skillbox::Invocation inv{.skill = *skill, .export_name = "", .input_json = "null", .overrides = {}};
  auto check = [&](const skillbox::RunResult& r) {
    if (r.outcome == skillbox::Outcome::ok && r.value_json == w.expect) return true;
    std::fprintf(stderr, "peer_skillbox: %s gave %s %s %s\n", file, std::string(to_string(r.outcome)).c_str(),
                 r.value_json.c_str(), r.error ? r.error->message.c_str() : "");
    return false;
  };
  if (!hold) {
    // Children's faults (worker mode) are counted from the end of the warm-up that run.sh drops
    // (PEERS_WARM iterations) to the end, and printed as one line: "children-faults FAULTS ITERATIONS".
    const char* warm_env = std::getenv("PEERS_WARM");
    const int warm = std::clamp(warm_env != nullptr ? std::atoi(warm_env) : 0, 0, count);
    long children_start = children_minor_faults();
    for (int i = 0; i < count; i++) {
      if (i == warm && warm > 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the zygote reaps the warm-up's workers
        children_start = children_minor_faults();
      }
      const long f0 = own_minor_faults();
      const auto t0 = std::chrono::steady_clock::now();
      const double c0 = process_cpu_us();
      const skillbox::RunResult r = runner->run(inv);
      const auto t1 = std::chrono::steady_clock::now();
      const double c1 = process_cpu_us();
      const long f1 = own_minor_faults();
      if (!check(r)) return 1;
      std::printf("%.1f %.1f %ld\n", std::chrono::duration<double, std::micro>(t1 - t0).count(), c1 - c0,
                  f1 - f0);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::printf("children-faults %ld %d\n", children_minor_faults() - children_start, count - warm);
    return 0;
  }
  // W4: `count` invocations alive at once, each parked on a timer; resident memory is read while all are
  // known to be live (started before the sample and returned after it, checked afterwards).
  if (!check(runner->run(inv))) return 1;  // warm the runner once
  using Clock = std::chrono::steady_clock;
  const long before = resident_bytes();
  std::vector<skillbox::RunResult> results(static_cast<size_t>(count));
  std::vector<Clock::time_point> returned(results.size());
  std::vector<std::thread> callers;
  const auto launch = Clock::now();
  for (size_t i = 0; i < results.size(); i++)
    callers.emplace_back([&, i] {
      results[i] = runner->run(inv);
      returned[i] = Clock::now();
    });
  std::this_thread::sleep_until(launch + kSampleAt);
  const long during = resident_bytes();
  const auto sampled = Clock::now();
  for (auto& t : callers) t.join();
  long live = 0;
  uint64_t heap = 0;
  int status = 0;
  for (size_t i = 0; i < results.size(); i++) {
    if (!check(results[i])) status = 1;
    const auto started = returned[i] - std::chrono::milliseconds(results[i].usage.wall_ms);
    if (started < sampled && returned[i] > sampled) live++;
    heap = std::max(heap, results[i].usage.heap_peak_bytes);
  }
  if (live < count)
    std::fprintf(stderr, "peer_skillbox: only %ld of %d sandboxes were live at the sample\n", live, count);
  if (live == 0) return 1;
  std::printf("%ld\nheap %llu\n", (during - before) / live, static_cast<unsigned long long>(heap));
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s in-process|worker WORKLOAD_FILE W1|W2|W3|W4 COUNT\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  const std::string workload_name = argv[3];
  const int count = std::atoi(argv[4]);
  Workload w;
  if (!read_workload(argv[2], w) || count < 1) {
    std::fprintf(stderr, "peer_skillbox: cannot read workload %s\n", argv[2]);
    return 2;
  }
  const bool hold = workload_name == "W4";

  char tmpl[] = "/tmp/skillbox-peers-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return 2;
  const std::filesystem::path root = tmpl;
  const std::filesystem::path dir = root / "skill";
  std::filesystem::create_directories(dir);
  std::string source = "export default " + std::string(hold ? "async " : "") +
                       "() => {\n  const v = (() => {\n" + w.body + "\n  })();\n";
  if (hold) source += "  await new Promise((r) => setTimeout(r, " + std::to_string(kHold.count()) + "));\n";
  source += "  return v;\n};\n";
  if (!write_file(dir / "skill.json", R"({"id": "peers", "entry": "index.js"})") ||
      !write_file(dir / "index.js", source))
    return 2;

  // A deployed skill's files are older than a second; the runner's source cache never trusts a read of
  // younger files (runner/source_cache.h, coarse file system timestamps), so let this one age first.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  const int status = run(mode, root, dir, w, argv[2], count, hold);
  std::error_code ec;
  std::filesystem::remove_all(root, ec);
  return status;
}
