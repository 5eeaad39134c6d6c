// runner/skill_reader.h — the host reads a skill's sources, confined to the skill folder.
//
// The engine opens no file (docs/architecture.md "Layers"): before an invocation the host reads the
// skill's sources into a bus::SkillSources and hands that to the engine (in worker mode, inside the
// invocation frame). The sources are the entry's module graph and nothing else: the entry, then every
// file it imports, then every file those import, and so on. What a file imports comes from QuickJS's
// own parser (engine/module_requests.h: import and export declarations, and import() of a string
// literal), run without compiling or running anything by engine::walk_module_graph (one walk for both
// modes), which resolves each specifier as the loader does (engine::resolve_specifier) and fetches a
// file if its name is one the loader accepts (engine::is_module_source_name). In-process (and in
// `skillbox check`) the walk runs in the host and fetches with a SourceReader; in worker mode it runs
// in the worker, and the supervisor only serves the worker's SourcesRequests with a SourceReader: it
// never parses skill code (docs/isolation.md "What the supervisor does"). Nothing else in the folder is
// opened, so a node_modules folder or a build's leftovers beside the entry cost nothing.
//
// Every open is resolved beneath the skill folder by the kernel (openat2 RESOLVE_BENEATH), so a
// symbolic link that leads outside the folder is refused like a ".." escape, and the folders above an
// imported file must be real folders (a symbolic link to a folder is refused). An imported name that
// does not exist, leads outside, is too large or not a regular file is recorded in
// SkillSources::refused, and loading it fails with the same message as before the sources moved into
// memory. Where openat2 is missing (ENOSYS, kernels before 5.6) or blocked (EPERM, a container's
// seccomp profile), reading fails closed: there is no fallback to a plain open, exactly as in the
// workspace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/unique_fd.h"
#include "bus/skill_sources.h"
#include "engine/skill_files.h"
#include "skillbox/skillbox.h"

namespace skillbox::runner {

/// Most files (read or refused) in one skill's module graph, the entry included. A skill is a handful
/// of files; 4096 leaves room for a vendored library while bounding the reads and the host memory
/// held for the invocation (and the size of a worker's invocation frame).
inline constexpr size_t kMaxSourceFiles = 4096;
/// Most bytes of source read for one invocation, all files together: the per-file cap
/// (engine::kMaxSourceBytes), since held in host memory for the whole invocation and below the
/// frame limit of worker mode (bus::kMaxFrameBytes).
inline constexpr uint64_t kMaxSourceTotalBytes = engine::kMaxSourceBytes;
/// Deepest folder nesting below the skill folder of an imported file; deeper is an error, not a
/// silent omission.
inline constexpr size_t kMaxSourceDepth = 32;

/// The openat2(2) system call: opens `name` beneath `dir_fd` with open(2) `flags` and openat2
/// `resolve` flags; returns the new descriptor, or -1 with errno set. Tests pass a stand-in that
/// fails with ENOSYS or EPERM to see reading fail closed.
using Openat2Fn = int (*)(int dir_fd, const char* name, uint64_t flags, uint64_t resolve);

/// The real openat2(2).
int system_openat2(int dir_fd, const char* name, uint64_t flags, uint64_t resolve);

/// An open skill folder. Reads are resolved beneath it by the kernel (openat2 RESOLVE_BENEATH), so a
/// symlink that leads outside the folder is refused like a ".." escape.
class SkillFiles {
 public:
  /// Opens `dir`. Errors (for the host, may name the host path) if it is not a readable directory.
  static Result<SkillFiles> open(const std::filesystem::path& dir, Openat2Fn openat2 = &system_openat2);

  /// Reads the file named `name` (normal form), at most min(`max_bytes`, engine::kMaxSourceBytes).
  /// Error messages name only `name`: "'x.js' does not exist in the skill folder", "... leads outside
  /// the skill folder", "... is not a regular file", "... is too large (N bytes; limit is M bytes)".
  /// Where openat2 is missing or blocked the error says so (fail closed, never a plain open).
  [[nodiscard]] Result<std::string> read(const std::string& name, uint64_t max_bytes) const;

  /// The descriptor of the folder (O_RDONLY | O_DIRECTORY).
  [[nodiscard]] int fd() const { return dir_.get(); }
  /// The openat2 in use.
  [[nodiscard]] Openat2Fn openat2_fn() const { return openat2_; }

 private:
  SkillFiles(base::UniqueFd dir, Openat2Fn fn) : dir_(std::move(dir)), openat2_(fn) {}
  base::UniqueFd dir_;
  Openat2Fn openat2_;
};

/// The status of one path a read of the sources depended on, to tell later whether it changed
/// (runner/source_cache.h). Folders are stamped without following links, files as opened (a link
/// that stays inside the folder is followed, as the read did).
struct SourceStamp {
  std::string name;     // relative to the skill folder in normal form
  bool follow = false;  // stat follows a final symbolic link (files) or not (folders, refused names)
  uint64_t dev = 0;
  uint64_t ino = 0;  // 0: the name did not exist
  uint64_t size = 0;
  uint32_t mode = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;  // changes with every change of the inode and cannot be set back by a user
  bool operator==(const SourceStamp&) const = default;
};

/// The host's reader of one skill's sources, without any parsing: the entry, then the files a graph
/// walk asks for (engine/module_graph.h), in-process directly and in worker mode for the worker's
/// SourcesRequests. It keeps the caps (kMaxSourceFiles, kMaxSourceTotalBytes, kMaxSourceDepth, the
/// per-file min(limits.memory_bytes, engine::kMaxSourceBytes)) across all its reads, so a worker that
/// asks again and again is held to the same totals as one read of the graph.
class SourceReader {
 public:
  /// Opens the skill folder `dir`. When `stamps` is given, it receives a SourceStamp of every file
  /// read, of every name that was refused or did not exist, and of every folder above them
  /// (runner/source_cache.h); it must outlive the reader.
  static Result<SourceReader> open(const std::filesystem::path& dir, const Limits& limits,
                                   Openat2Fn openat2 = &system_openat2,
                                   std::vector<SourceStamp>* stamps = nullptr);

  /// Reads the entry named `name` (normal form) into `pool` (pool.entry and pool.files). Errors:
  /// "entry file <why it cannot be read>", openat2 missing or blocked.
  [[nodiscard]] Result<void> read_entry(const std::string& name, bus::SkillSources& pool);

  /// Counts what `pool` holds (files and refusals, read earlier and cached) against the caps.
  void count(const bus::SkillSources& pool);

  /// Reads each of `names` (normal form, module source names) in order into `pool`: its text into
  /// pool.files, or why it cannot be loaded into pool.refused (or a folder above it there). Errors,
  /// each a message for RunResult (outcome invalid): openat2 is missing or blocked, or one of the caps
  /// is exceeded (the message names the cap).
  [[nodiscard]] Result<void> fetch(const std::vector<std::string>& names, bus::SkillSources& pool);

 private:
  enum class Folder : uint8_t { real, missing, refused };

  SourceReader(SkillFiles files, const Limits& limits, std::vector<SourceStamp>* stamps)
      : files_(std::move(files)), max_file_bytes_(limits.memory_bytes), stamps_(stamps) {}

  Result<void> read(const std::string& name, bus::SkillSources& pool);
  Result<Folder> check_folder(const std::string& folder, bus::SkillSources& pool);
  Result<void> missing(const std::string& name, bus::SkillSources& pool);
  Result<void> refuse(const std::string& name, std::string why, bus::SkillSources& pool);
  Result<void> count_one(const std::string& name, uint64_t regular_file_bytes);
  [[nodiscard]] SourceStamp stamp_of_beneath(const std::string& name) const;

  SkillFiles files_;
  uint64_t max_file_bytes_;
  std::vector<SourceStamp>* stamps_;
  std::map<std::string, Folder> folders_;  // folders above imported files, as found
  size_t files_counted_ = 0;
  uint64_t total_bytes_ = 0;
};

/// Reads the sources of the skill in `dir` whose manifest names `entry` (as written in the
/// manifest): the entry (whatever its name) and its module graph (the file comment), walked by
/// engine::walk_module_graph with a SourceReader as its fetch, each file at most
/// min(limits.memory_bytes, engine::kMaxSourceBytes) (a larger file could never be compiled).
/// Imports are found by parsing under `limits` (heap and JS stack, engine::ModuleRequestParser), so
/// a file the skill could not compile is not parsed further either. Errors, each a message for
/// RunResult (outcome invalid): "entry: <why the name is refused>", "entry file <why it cannot be
/// read>", the folder cannot be opened, openat2 is missing or blocked, or one of the caps above is
/// exceeded (the message names the cap).
///
/// This parses skill code in the calling process: in-process runs and `skillbox check` only. Worker
/// mode's supervisor reads the entry (read_skill_entry) and serves the worker's SourcesRequests with
/// a SourceReader; the worker walks the graph.
///
/// The parse needs a thread with a JS stack (runner::JsThreadPool's): on any other thread the read
/// runs on a fresh one, which the call waits for.
///
/// When `stamps` is given, it receives the stamps of everything read (SourceReader::open): a file's
/// stamp changes when its bytes do (and so, perhaps, its imports), a missing name's when it appears,
/// a folder's when it is swapped for a link, so the same stamps mean the same sources.
[[nodiscard]] Result<bus::SkillSources> read_skill_sources(const std::filesystem::path& dir,
                                                           std::string_view entry, const Limits& limits,
                                                           Openat2Fn openat2 = &system_openat2,
                                                           std::vector<SourceStamp>* stamps = nullptr);

/// The entry name of the manifest's `entry` in normal form, or "entry: <why it is refused>".
[[nodiscard]] Result<std::string> entry_name(std::string_view entry);

/// The stamp of `name` (relative to `dir`, "" for `dir` itself) as it is now; ino 0 if it is gone.
[[nodiscard]] SourceStamp stamp_of(const std::filesystem::path& dir, const std::string& name, bool follow);

}  // namespace skillbox::runner
