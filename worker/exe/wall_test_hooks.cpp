#include "worker/exe/wall_test_hooks.h"

#include <fcntl.h>
#include <linux/io_uring.h>
#include <netinet/in.h>
#include <quickjs.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <string>
#include <variant>

#include "bus/codec.h"
#include "bus/worker_frames.h"
#include "bus/worker_transport.h"

namespace skillbox::worker {
namespace {

long result_or_errno(long r) {
  return r < 0 ? -errno : r;
}

// Probes of the worker's own limits: a pooled worker lowers them to its invocation's (worker_child.h).
long rlimit_call(const std::string& name) {
  if (name == "getpid") return getpid();
  if (name == "rlimit_as") {  // the hard RLIMIT_AS, in MiB (exact in a double)
    rlimit r{};
    if (getrlimit(RLIMIT_AS, &r) != 0) return -errno;
    return r.rlim_max == RLIM_INFINITY ? -1 : static_cast<long>(r.rlim_max / (1024 * 1024));
  }
  if (name == "raise_rlimit") {  // back up to the ceiling it was forked with: the kernel says EPERM
    rlimit r{};
    if (getrlimit(RLIMIT_AS, &r) != 0) return -errno;
    const rlim_t raised = r.rlim_max + 4096ull * 1024 * 1024;
    const rlimit wanted{raised, raised};
    return result_or_errno(setrlimit(RLIMIT_AS, &wanted));
  }
  if (name == "mmap_1g") {  // 1 GiB of address space, untouched: only RLIMIT_AS can refuse it
    void* p =
        mmap(nullptr, 1ull << 30, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return -errno;
    munmap(p, 1ull << 30);
    return 0;
  }
  return -EINVAL;
}

long wall_call(const std::string& name) {
  if (name == "open") return result_or_errno(syscall(SYS_open, "/etc/passwd", O_RDONLY));
  if (name == "openat") return result_or_errno(syscall(SYS_openat, AT_FDCWD, "/etc/passwd", O_RDONLY));
  if (name == "stat") {
    struct stat st {};
    return result_or_errno(stat("/etc/passwd", &st));
  }
  if (name == "socket") return result_or_errno(syscall(SYS_socket, AF_INET, SOCK_STREAM, 0));
  if (name == "connect") {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(9);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return result_or_errno(syscall(SYS_connect, bus::kWorkerSocketFd, &addr, sizeof(addr)));
  }
  if (name == "execve") {
    const char* argv[] = {"/bin/true", nullptr};
    return result_or_errno(syscall(SYS_execve, "/bin/true", argv, nullptr));
  }
  if (name == "fork") return result_or_errno(syscall(SYS_fork));
  if (name == "clone") return result_or_errno(syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0));
  if (name == "ptrace") return result_or_errno(syscall(SYS_ptrace, PTRACE_ATTACH, getppid(), 0, 0));
  if (name == "io_uring_setup") {
    io_uring_params params{};
    return result_or_errno(syscall(SYS_io_uring_setup, 1, &params));
  }
  if (name == "memfd_create") return result_or_errno(syscall(SYS_memfd_create, "x", 0));
  if (name == "mmap_exec") {
    void* p = mmap(nullptr, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? -errno : 0;
  }
  if (name == "mmap_zero") {
    // Address 0 needs CAP_SYS_RAWIO (vm.mmap_min_addr): refused once the worker holds no capability.
    void* p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    return p == MAP_FAILED ? -errno : 0;
  }
  if (name == "mprotect_exec") {
    void* p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return -errno;
    return result_or_errno(mprotect(p, 4096, PROT_READ | PROT_EXEC));
  }
  return rlimit_call(name);
}

void write_raw(const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (n > 0) {
    const ssize_t w = write(bus::kWorkerSocketFd, p, n);
    if (w <= 0) return;
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void write_framed(const bus::Bytes& frame) {
  const auto len = static_cast<uint32_t>(frame.size());
  const uint8_t header[4] = {static_cast<uint8_t>(len), static_cast<uint8_t>(len >> 8),
                             static_cast<uint8_t>(len >> 16), static_cast<uint8_t>(len >> 24)};
  write_raw(header, sizeof(header));
  write_raw(frame.data(), frame.size());
}

[[noreturn]] void wait_to_be_killed() {
  std::array<char, 64> buf{};
  for (;;) {
    if (read(bus::kWorkerSocketFd, buf.data(), buf.size()) <= 0) _exit(0);
  }
}

void garbage(const std::string& kind) {
  if (kind == "truncated") {
    const uint8_t header[4] = {100, 0, 0, 0};
    write_raw(header, sizeof(header));
    write_raw("0123456789", 10);
    _exit(0);  // the socket closes in the middle of the frame
  }
  if (kind == "oversized") {
    const uint8_t header[4] = {0xf0, 0xff, 0xff, 0xff};
    write_raw(header, sizeof(header));
  } else if (kind == "wrong_tag") {
    // MessagePack [version, 0 (request), 1, 99, []]: tag 99 names no request type.
    const uint8_t frame[] = {0x95, static_cast<uint8_t>(bus::kFrameVersion), 0x00, 0x01, 0x63, 0x90};
    write_framed(bus::Bytes(std::begin(frame), std::end(frame)));
  } else if (kind == "wrong_id") {
    write_framed(bus::encode_request(0, bus::LogRequest{bus::LogLevel::info, "id zero"}));
  } else if (kind == "reply") {
    write_framed(bus::encode_reply(1, bus::OkReply{}));
  } else if (kind == "invocation") {
    write_framed(bus::encode_invocation(bus::InvocationFrame{}));
  } else if (kind == "noise") {
    write_framed(bus::Bytes{0xc1, 0xc1, 0xc1, 0xc1});
  } else if (kind == "crashed_result") {
    bus::ResultFrame r;
    r.outcome = Outcome::crashed;
    write_framed(bus::encode_result(r));
  }
  wait_to_be_killed();
}

// A SourcesRequest as a worker that was taken over may send it: any names, any number of times. The
// ids start far above the engine's so they keep increasing. Returns what the supervisor answered:
// "files:a.js,b.js refused:c.js" or "error:<message>"; a worker the supervisor kills never returns.
std::string sources(const std::string& names_text) {
  static uint64_t next_id = uint64_t{1} << 32;
  bus::SourcesRequest request;
  size_t start = 0;
  for (;;) {
    const size_t end = names_text.find('\n', start);
    request.names.push_back(
        names_text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  const uint64_t id = next_id++;
  write_framed(bus::encode_request(id, request));
  Result<bus::Bytes, Error> bytes = bus::read_frame_blocking(bus::kWorkerSocketFd, bus::kMaxFrameBytes);
  if (!bytes) wait_to_be_killed();
  Result<bus::ToWorker> frame = bus::decode_to_worker(*bytes);
  if (!frame || !std::holds_alternative<bus::ReplyFrame>(*frame)) wait_to_be_killed();
  const bus::ReplyFrame& reply = std::get<bus::ReplyFrame>(*frame);
  if (const auto* refused = std::get_if<bus::ErrorReply>(&reply.reply)) return "error:" + refused->message;
  const auto* got = std::get_if<bus::SourcesReply>(&reply.reply);
  if (got == nullptr) return "unexpected reply";
  std::string out = "files:";
  for (const auto& [name, text] : got->files) out += name + ",";
  out += " refused:";
  for (const auto& [name, why] : got->refused) out += name + ",";
  return out;
}

std::string arg_string(JSContext* ctx, int argc, JSValueConst* argv) {
  if (argc < 1) return {};
  const char* s = JS_ToCString(ctx, argv[0]);
  if (s == nullptr) return {};
  std::string out(s);
  JS_FreeCString(ctx, s);
  return out;
}

JSValue js_wall(JSContext* ctx, JSValueConst /*this*/, int argc, JSValueConst* argv) {
  return JS_NewInt64(ctx, wall_call(arg_string(ctx, argc, argv)));
}

JSValue js_crash(JSContext* /*ctx*/, JSValueConst /*this*/, int /*argc*/, JSValueConst* /*argv*/) {
  // A crash the engine did not cause: SIGSEGV as from a memory-safety bug (raise() would need tgkill).
  volatile uintptr_t address = 0;
  *reinterpret_cast<volatile int*>(address) = 1;
  return JS_UNDEFINED;
}

JSValue js_spin(JSContext* /*ctx*/, JSValueConst /*this*/, int /*argc*/, JSValueConst* /*argv*/) {
  volatile uint64_t n = 0;
  for (;;) n = n + 1;
}

JSValue js_sources(JSContext* ctx, JSValueConst /*this*/, int argc, JSValueConst* argv) {
  if (argc < 1) return JS_UNDEFINED;
  size_t len = 0;
  const char* s = JS_ToCStringLen(ctx, &len, argv[0]);  // NUL bytes kept: a hostile name may hold one
  if (s == nullptr) return JS_EXCEPTION;
  const std::string names(s, len);
  JS_FreeCString(ctx, s);
  const std::string answer = sources(names);
  return JS_NewStringLen(ctx, answer.data(), answer.size());
}

JSValue js_garbage(JSContext* ctx, JSValueConst /*this*/, int argc, JSValueConst* argv) {
  garbage(arg_string(ctx, argc, argv));
  return JS_UNDEFINED;
}

}  // namespace

void install_wall_test_hooks(JSContext* ctx) {
  JSValue global = JS_GetGlobalObject(ctx);
  JS_SetPropertyStr(ctx, global, "__wall", JS_NewCFunction(ctx, js_wall, "__wall", 1));
  JS_SetPropertyStr(ctx, global, "__crash", JS_NewCFunction(ctx, js_crash, "__crash", 0));
  JS_SetPropertyStr(ctx, global, "__spin", JS_NewCFunction(ctx, js_spin, "__spin", 0));
  JS_SetPropertyStr(ctx, global, "__garbage", JS_NewCFunction(ctx, js_garbage, "__garbage", 1));
  JS_SetPropertyStr(ctx, global, "__sources", JS_NewCFunction(ctx, js_sources, "__sources", 1));
  JS_FreeValue(ctx, global);
}

}  // namespace skillbox::worker
