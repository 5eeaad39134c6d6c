// Cost of the workspace capability, each next to a plain-syscall baseline measured in the same run:
//
//   BM_Baseline_OpenDirAndStat        open(2) + fstat(2) of a directory
//   BM_Workspace_OpenAndStat          a fresh Workspace (one invocation) answering stat(".")
//   BM_Workspace_FirstMutation/N      a fresh Workspace whose first mutation scans N files
//                                     (mkdir of an existing directory: scan, then AlreadyExists)
//   BM_Baseline_WriteFsyncRename      write a small temp file, fsync, rename, fsync the directory
//   BM_Workspace_WriteFile            writeFile of the same bytes in a warm Workspace
//
// The ratios Workspace/baseline are what to watch; absolute numbers depend on the disk.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "capabilities/fs/workspace.h"

namespace {

namespace fs = std::filesystem;
using skillbox::FsMode;
using skillbox::FsPolicy;
using skillbox::capabilities::Workspace;
namespace bus = skillbox::bus;

class TempData {
 public:
  TempData() {
    std::string pattern = (fs::temp_directory_path() / "skillbox-fsbench-XXXXXX").string();
    if (!mkdtemp(pattern.data())) std::abort();
    root_ = pattern;
    fs::create_directories(workspace());
  }
  ~TempData() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  fs::path data() const { return root_; }
  fs::path workspace() const { return root_ / "skills" / "bench" / "workspace"; }

 private:
  fs::path root_;
};

FsPolicy readwrite() {
  FsPolicy p;
  p.mode = FsMode::readwrite;
  p.max_files = 100'000;
  p.quota_bytes = 1ull << 30;
  return p;
}

void BM_Baseline_OpenDirAndStat(benchmark::State& state) {
  TempData tmp;
  const std::string dir = tmp.workspace().string();
  for (auto _ : state) {
    const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat st {};
    fstat(fd, &st);
    benchmark::DoNotOptimize(st.st_ino);
    close(fd);
  }
}
BENCHMARK(BM_Baseline_OpenDirAndStat);

void BM_Workspace_OpenAndStat(benchmark::State& state) {
  TempData tmp;
  for (auto _ : state) {
    Workspace w(tmp.data(), "bench", readwrite());
    auto reply = w.handle(bus::FsStatRequest{"."});
    if (!std::holds_alternative<bus::FsStatReply>(reply)) state.SkipWithError("stat failed");
  }
}
BENCHMARK(BM_Workspace_OpenAndStat);

void BM_Workspace_FirstMutation(benchmark::State& state) {
  TempData tmp;
  const auto files = static_cast<int>(state.range(0));
  fs::create_directories(tmp.workspace() / "existing");
  for (int i = 0; i < files; ++i) {
    const fs::path dir = tmp.workspace() / ("d" + std::to_string(i % 10));
    fs::create_directories(dir);
    std::ofstream(dir / ("f" + std::to_string(i))) << "content of a small file";
  }
  for (auto _ : state) {
    Workspace w(tmp.data(), "bench", readwrite());
    auto reply = w.handle(bus::FsMkdirRequest{"existing", false});
    const auto* e = std::get_if<bus::ErrorReply>(&reply);
    if (!e || e->code != bus::ErrorCode::AlreadyExists) state.SkipWithError("unexpected reply");
  }
  state.counters["files"] = files;
}
BENCHMARK(BM_Workspace_FirstMutation)->Arg(0)->Arg(100)->Arg(1000)->Arg(10000);

void BM_Baseline_WriteFsyncRename(benchmark::State& state) {
  TempData tmp;
  const int dir = open(tmp.workspace().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  const std::string data(1024, 'x');
  for (auto _ : state) {
    const int fd = openat(dir, "tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    benchmark::DoNotOptimize(write(fd, data.data(), data.size()));
    fsync(fd);
    close(fd);
    renameat(dir, "tmp", dir, "file");
    fsync(dir);
  }
  close(dir);
}
BENCHMARK(BM_Baseline_WriteFsyncRename)->UseRealTime();

void BM_Workspace_WriteFile(benchmark::State& state) {
  TempData tmp;
  Workspace w(tmp.data(), "bench", readwrite());
  const bus::Bytes data(1024, 'x');
  for (auto _ : state) {
    auto reply = w.handle(bus::FsWriteFileRequest{"file", data, false});
    if (!std::holds_alternative<bus::OkReply>(reply)) state.SkipWithError("write failed");
  }
}
BENCHMARK(BM_Workspace_WriteFile)->UseRealTime();

}  // namespace

// main() is bench/main.cpp, shared by every bench file.
