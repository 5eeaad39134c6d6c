// No byte of a secret is ever in the memory of a run.
//
// Worker mode (WorkerHeapScan): the run's whole address space is its worker process. The test holds a
// worker in the middle of a run (its bundle waits on a request the loopback server holds open at
// /gate), reads every readable mapping of the live worker through /proc/PID/maps and /proc/PID/mem
// (it is a descendant of this process, so the kernel lets the test read it), and looks for every
// 8-byte piece of every secret. The placeholders the bundle holds must be found there (the positive
// control: the scan sees the run's own strings, so it can fail). That suite runs once (its name
// starts with Worker, which the process-mode copy of the suite leaves out): it always uses a
// WorkerRunner of its own.
//
// In-process mode (BundleHeapScan): the host's own memory holds the secrets (the vault, the outgoing
// request), so the test scans what belongs to the run: every block the QuickJS runtime holds, in use
// or free, walked through the engine's allocator (HeapAccount::for_each_block), at the same point of the
// same bundle.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/sanitizer.h"
#include "compat/bundle_support.h"
#include "engine/heap.h"
#include "engine/session.h"
#include "runner/testing_hooks.h"
#include "skill_fixture.h"
#include "skillbox/skillbox.h"
#include "support/http_test_server.h"

namespace skillbox {
namespace {

using json = nlohmann::json;
using testing::Bundle;
using testing::describe_run;

// Random-looking, so that no 8-byte piece of them occurs anywhere by chance.
constexpr const char* kAccessToken = "ya29.q7Vx3KpLm9Zt2Rw8Ns4Hd6Fj";
constexpr const char* kApiToken = "secret_Tg5Wb1Yc8Qe3Ua7Io2Pk9Ls4";
constexpr const char* kPassword = "pw-Xo6Mv0Bn3Cz8Jr5Ek1";
constexpr size_t kPiece = 8;
constexpr const char* kPlaceholderPrefix = "skillbox-secret:";

// The bundle: it takes both credentials, makes the host put the real values into requests to the
// bound proxy (which echoes them back, so the response must be stripped before it enters the
// worker), logs and stores the placeholders, and then waits in oauth.fetch('/gate') until the test
// has scanned it. The values it keeps stay reachable until the run ends.
constexpr const char* kScanBundle = R"JS(
var kept = [];
globalThis.__skill = { default: {
  start(ctx) { kept.push(JSON.stringify(ctx)); },
  tools: [{ name: 'hold', execute(args) {
    const o = oauth.getCredential();
    const a = auth.getCredential();
    kept.push(oauth.fetch('/echo', {}).body);
    kept.push(net.fetch(args.proxy + '/echo', { headers: { 'X-Api': a.credentials.api_token,
                                                         'X-Pw': a.credentials.password } }).body);
    console.log('oauth placeholder', o.accessToken);
    state.set('held', { o: o.accessToken, a: a.credentials.api_token });
    // Worker mode: the test scans while the proxy holds this request. In-process: the test's native.
    const held = typeof __scanHeap === 'function' ? (__scanHeap(), { body: 'scanned' }) : oauth.fetch('/gate');
    return { gate: held.body, kept: kept.length, o: o.accessToken, a: a.credentials.api_token,
             p: a.credentials.password };
  } }]
} };
)JS";

/// The children of `parent`, from /proc/*/stat.
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  DIR* d = opendir("/proc");
  if (d == nullptr) return out;
  while (const dirent* e = readdir(d)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    std::ifstream in("/proc/" + std::string(e->d_name) + "/stat");
    std::string text;
    std::getline(in, text);                // /proc/PID/stat is one line
    const size_t paren = text.rfind(')');  // the command name may hold spaces and parentheses
    if (paren == std::string::npos) continue;
    std::istringstream rest(text.substr(paren + 1));
    std::string state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent && state != "Z") out.push_back(pid);
  }
  closedir(d);
  return out;
}

struct Scan {
  uint64_t bytes = 0;                     // bytes read from the worker's mappings
  bool heap_read = false;                 // the [heap] mapping was among them
  size_t regions = 0;                     // readable mappings read
  std::vector<std::string> found_pieces;  // secret pieces found (must stay empty)
  std::set<std::string> placeholders;     // "skillbox-secret:..." strings found
};

using Pieces = std::unordered_map<uint64_t, std::string>;

/// Every 8-byte piece of each secret, by its bytes.
Pieces secret_pieces() {
  Pieces pieces;
  for (const std::string secret : {kAccessToken, kApiToken, kPassword}) {
    for (size_t i = 0; i + kPiece <= secret.size(); ++i) {
      uint64_t v = 0;
      std::memcpy(&v, secret.data() + i, kPiece);
      pieces.emplace(v, secret.substr(i, kPiece));
    }
  }
  return pieces;
}

/// Looks for secret pieces and placeholders in `bytes` (from `where`).
void scan_bytes(std::string_view bytes, const std::string& where, const Pieces& pieces, Scan& scan) {
  scan.bytes += bytes.size();
  for (size_t i = 0; i + kPiece <= bytes.size(); ++i) {
    uint64_t v = 0;
    std::memcpy(&v, bytes.data() + i, kPiece);
    if (auto it = pieces.find(v); it != pieces.end() && bytes.compare(i, kPiece, it->second) == 0)
      scan.found_pieces.push_back(it->second + " in " + where);
  }
  for (size_t at = bytes.find(kPlaceholderPrefix); at != std::string_view::npos;
       at = bytes.find(kPlaceholderPrefix, at + 1)) {
    size_t stop = at;
    while (stop < bytes.size() && stop - at < 200 && bytes[stop] > ' ' && bytes[stop] != '"' &&
           bytes[stop] != '\'' && bytes[stop] != '\\')
      ++stop;
    scan.placeholders.insert(std::string(bytes.substr(at, stop - at)));
  }
}

/// Reads every readable mapping of `pid` and scans it.
Scan scan_process(pid_t pid, const Pieces& pieces) {
  Scan scan;
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  const int mem = ::open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
  if (mem < 0) {
    ADD_FAILURE() << "cannot open /proc/" << pid << "/mem: " << std::strerror(errno);
    return scan;
  }
  std::string line;
  std::string region;
  while (std::getline(maps, line)) {
    uint64_t start = 0, end = 0;
    char perms[5] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %4s", &start, &end, perms) != 3 || perms[0] != 'r') continue;
    if (line.find("[vvar") != std::string::npos || line.find("[vsyscall]") != std::string::npos) continue;
    // A worker's rlimits keep its data far below 1 GiB; larger mappings are reservations that hold no
    // data of the run (AddressSanitizer's shadow: terabytes, never touched by the skill's values).
    if (end - start > (uint64_t{1} << 30)) continue;
    region.resize(end - start);
    size_t got = 0;
    while (got < region.size()) {
      const ssize_t n =
          ::pread(mem, region.data() + got, region.size() - got, static_cast<off_t>(start + got));
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    if (got == 0) continue;
    ++scan.regions;
    if (line.find("[heap]") != std::string::npos) scan.heap_read = true;
    scan_bytes(std::string_view(region.data(), got), line, pieces, scan);
  }
  ::close(mem);
  return scan;
}

/// Both credentials of the scan bundle, bound to `proxy`.
SkillCredentials credentials(const testing::HttpTestServer& proxy) {
  OAuthCredential o;
  o.credential_id = "c1";
  o.access_token = kAccessToken;
  o.base_url = proxy.origin();
  AuthCredential a;
  a.mode = "self_hosted";
  a.credentials = {{"api_token", kApiToken}, {"password", kPassword}};
  a.hosts = {proxy.origin() + "/"};
  return SkillCredentials{.oauth = o, .auth = a};
}

/// What every scan must show: it read a real amount of memory, found each placeholder the run holds
/// (the positive control) and no piece of any secret; and the real values did reach the proxy.
void expect_clean(const Scan& scan, const RunResult& r, const testing::HttpTestServer& proxy,
                  const std::string& gate_text) {
  ASSERT_EQ(r.outcome, Outcome::ok) << describe_run(r);
  const json text = json::parse(json::parse(r.value_json)["content"][0]["text"].get<std::string>());
  EXPECT_EQ(text["gate"], gate_text);
  EXPECT_EQ(text["kept"], 3);
  for (const char* key : {"o", "a", "p"}) {
    const std::string placeholder = text[key];
    ASSERT_EQ(placeholder.rfind(kPlaceholderPrefix, 0), 0u) << placeholder;
    EXPECT_EQ(scan.placeholders.count(placeholder), 1u)
        << placeholder << " was not found by the scan; it found " << scan.placeholders.size()
        << " placeholder strings";
  }
  EXPECT_TRUE(scan.found_pieces.empty()) << "secret bytes in the run's memory: " << scan.found_pieces.front();
  size_t real = 0;
  for (const auto& req : proxy.recorded())
    for (const auto& [name, value] : req.headers)
      real += value.find(kAccessToken) != std::string::npos || value == kApiToken || value == kPassword;
  EXPECT_GE(real, 3u) << "the bearer token on /echo, the api token and the password on /echo";
}

TEST(WorkerHeapScan, NoByteOfASecretIsInTheLiveWorkersMemoryAndItsPlaceholdersAre) {
  if constexpr (base::kSanitizerBuild) {
    // The allocators of ASan and TSan keep the worker's heap inside reservations of terabytes, which
    // the scan skips (and could not read before the bundle's request times out): the scan runs in the
    // default build.
    GTEST_SKIP() << "the worker's heap is not scannable under a sanitizer's allocator";
  }
  HostOptions probe;
  probe.worker_path = SKILLBOX_WORKER_PATH;
  if (auto ok = WorkerRunner::check_support(probe); !ok) GTEST_SKIP() << ok.error().message;

  testing::HttpTestServer proxy;
  Bundle b("mailbox", testing::grants({proxy.origin()}, json::object(), {{"timeout_ms", 60000}}));
  b.write("index.js", kScanBundle);

  HostOptions host = testing::host(b.data());
  host.worker_path = SKILLBOX_WORKER_PATH;
  host.worker_pool_size = 0;  // the only child of the zygote is then the worker of this run
  host.credentials["mailbox"] = credentials(proxy);
  WorkerRunner runner(host);
  const Pieces pieces = secret_pieces();

  const Skill skill = b.skill();
  std::future<RunResult> run = std::async(std::launch::async, [&] {
    return runner.run(Invocation{.skill = skill,
                                 .export_name = "tool:hold",
                                 .input_json = json({{"proxy", proxy.origin()}}).dump(),
                                 .overrides = {}});
  });
  const bool at_gate = proxy.wait_until([&] {
    for (const auto& r : proxy.recorded())
      if (r.target == "/gate") return true;
    return false;
  });
  Scan scan;
  std::vector<pid_t> workers;
  if (at_gate) {
    workers = children_of(runner.zygote_pid());
    if (workers.size() == 1) scan = scan_process(workers[0], pieces);
  }
  proxy.open_gate(1);
  const RunResult r = run.get();

  ASSERT_TRUE(at_gate) << "the bundle never reached /gate: " << describe_run(r);
  ASSERT_EQ(workers.size(), 1u) << "expected exactly the run's worker under the zygote";
  // The whole address space: the heap, stacks, anonymous mappings, freed memory.
  EXPECT_TRUE(scan.heap_read);
  EXPECT_GT(scan.regions, 5u);
  EXPECT_GT(scan.bytes, uint64_t{1} << 20);
  expect_clean(scan, r, proxy, "through the gate");
}

// In-process: the test's native __scanHeap() walks every block of the runtime it is called in.
Scan g_heap_scan;
const Pieces* g_pieces = nullptr;
uint64_t g_heap_bytes = 0;  // what the allocator counted (its footprint) when the walk ran

JSValue js_scan_heap(JSContext* ctx, JSValueConst /*this*/, int /*argc*/, JSValueConst* /*argv*/) {
  const auto* session = static_cast<const engine::Session*>(JS_GetRuntimeOpaque(JS_GetRuntime(ctx)));
  g_heap_scan = Scan{};
  g_heap_bytes = session->heap().current_bytes();
  session->heap().for_each_block([](const unsigned char* p, size_t n) {
    ++g_heap_scan.regions;
    scan_bytes(std::string_view(reinterpret_cast<const char*>(p), n), "a QuickJS heap block", *g_pieces,
               g_heap_scan);
  });
  return JS_UNDEFINED;
}

TEST(BundleHeapScan, InProcessNoByteOfASecretIsInAnyBlockOfTheRuntimesHeap) {
  SKIP_IN_PROCESS_MODE("walks the heap of an in-process runtime; process mode is WorkerHeapScan");
  testing::HttpTestServer proxy;
  Bundle b("mailbox", testing::grants({proxy.origin()}, json::object(), {{"timeout_ms", 60000}}));
  b.write("index.js", kScanBundle);
  HostOptions host = testing::host(b.data());
  host.credentials["mailbox"] = credentials(proxy);
  const Pieces pieces = secret_pieces();
  g_pieces = &pieces;
  runner::testing::set_extra_api([](JSContext* ctx) {
    JSValue global = JS_GetGlobalObject(ctx);
    JS_SetPropertyStr(ctx, global, "__scanHeap", JS_NewCFunction(ctx, js_scan_heap, "__scanHeap", 0));
    JS_FreeValue(ctx, global);
  });
  InProcessRunner runner(host);
  const RunResult r = runner.run(Invocation{.skill = b.skill(),
                                            .export_name = "tool:hold",
                                            .input_json = json({{"proxy", proxy.origin()}}).dump(),
                                            .overrides = {}});
  runner::testing::set_extra_api({});
  EXPECT_GT(g_heap_scan.regions, 1000u) << "the runtime's blocks were walked";
  EXPECT_EQ(g_heap_scan.bytes, g_heap_bytes) << "every block the runtime holds, free ones included";
  expect_clean(g_heap_scan, r, proxy, "scanned");
}

}  // namespace
}  // namespace skillbox
