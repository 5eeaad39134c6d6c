// runner/source_cache.h — a runner's cache of skill sources, revalidated by stat before every use.
//
// Reading a skill's sources (runner/skill_reader.h) opens, checks, reads and parses the entry and every
// file it imports: for a small skill that is a good part of a trivial invocation. The cache keeps what
// one read returned together with the stamps of everything it depended on (device, inode, size, mode,
// mtime and ctime of each file read, each imported name that was refused or missing, each folder above
// them); the next invocation of the same skill stats those paths again and uses the cached sources
// only if every stamp is unchanged. An edited file may import other files now, and its stamp changed,
// so it is read and parsed again; an imported file that is removed, or a missing one that appears,
// changes its own stamp: each takes effect on the next run.
//
// Timestamps are coarse (a file system clock tick can hold two writes of the same size), so a read
// whose stamps are younger than kRacyWindow when it was made is never trusted: like git's "racily
// clean" index entries, it is read again until the files have been quiet for that long.
//
// Only the host's own reads are cached, as text handed to the engine to compile; no JS value, heap or
// runtime state is kept (a fresh runtime still compiles the sources on every invocation).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "base/mutex.h"
#include "bus/skill_sources.h"
#include "runner/skill_reader.h"
#include "skillbox/result.h"

namespace skillbox::runner {

class SourceCache {
 public:
  /// Reads younger than this (by the stamps' mtime and ctime) are not trusted; see the file comment.
  static constexpr std::chrono::milliseconds kRacyWindow{1000};
  /// Most skills kept; the oldest entry is dropped beyond it.
  static constexpr size_t kMaxSkills = 64;
  /// Most source bytes kept, all skills together (a skill may hold up to kMaxSourceTotalBytes).
  static constexpr uint64_t kMaxBytes = 64ull * 1024 * 1024;

  /// `racy_window`: kRacyWindow, or shorter in tests that change sizes or inodes only.
  explicit SourceCache(std::chrono::milliseconds racy_window = kRacyWindow,
                       Openat2Fn openat2 = &system_openat2)
      : racy_window_(racy_window), openat2_(openat2) {}

  /// read_skill_sources(dir, entry, limits), from the cache when every stamp of the cached read is
  /// unchanged. Errors are never cached. Thread-safe; a read that is not served from the cache parses
  /// on a thread with a JS stack (read_skill_sources), the calling thread if it is one.
  [[nodiscard]] Result<bus::SkillSources> read(const std::filesystem::path& dir, std::string_view entry,
                                               const Limits& limits);

  /// Worker mode: what the supervisor hands a worker before it walks the graph, and the stamps it
  /// depends on. Never parsed here.
  struct Served {
    bus::SkillSources pool;  // the entry, plus any files and refusals served before
    std::vector<SourceStamp> stamps;
    int64_t read_at_ns = 0;  // CLOCK_REALTIME when the oldest of the reads started
  };

  /// Worker mode: the entry of the skill in `dir` read now (errors as read_skill_sources's for the
  /// entry); or, when every stamp of what this skill's last invocation was served is unchanged, that
  /// too (so the worker asks for nothing it had last time). Reads no file but the entry, parses none.
  [[nodiscard]] Result<Served> serve_entry(const std::filesystem::path& dir, std::string_view entry,
                                           const Limits& limits);

  /// Worker mode: keeps what the supervisor served one invocation (serve_entry's and every
  /// SourcesRequest's files and refusals, with their stamps) for the next serve_entry. What a worker
  /// asked for is only ever files of the skill's own folder, within the caps; the next worker still
  /// walks the graph and takes from it only what its entry imports.
  void keep_served(const std::filesystem::path& dir, std::string_view entry, const Limits& limits,
                   Served served);

  /// Reads served from the cache so far (diagnostics, benchmarks).
  [[nodiscard]] uint64_t hits() const;

 private:
  // Folder, entry, heap limit (the per-file cap, and the parse's), stack limit (the parse's): what
  // a file imports is known only as far as it parses within them.
  // Last: whether the entry holds a worker mode's served files (serve_entry) or a walked graph (read).
  using Key = std::tuple<std::string, std::string, uint64_t, uint64_t, bool>;
  struct Entry {
    std::shared_ptr<const bus::SkillSources> sources;
    std::vector<SourceStamp> stamps;
    int64_t read_at_ns = 0;  // CLOCK_REALTIME when the read started (the file system's clock)
    uint64_t bytes = 0;
    uint64_t sequence = 0;  // insertion order, for eviction
  };

  /// Stores `fresh` under `key`, dropping the oldest entries beyond the caps.
  void store(Key key, Entry fresh);
  /// The entry under `key` if every stamp is unchanged (counted as a hit).
  [[nodiscard]] std::optional<Entry> valid_entry(const Key& key, const std::filesystem::path& dir);

  std::chrono::milliseconds racy_window_;
  Openat2Fn openat2_;
  mutable base::Mutex mutex_;
  std::map<Key, Entry> entries_ SKILLBOX_GUARDED_BY(mutex_);
  uint64_t bytes_ SKILLBOX_GUARDED_BY(mutex_) = 0;
  uint64_t next_sequence_ SKILLBOX_GUARDED_BY(mutex_) = 0;
  uint64_t hits_ SKILLBOX_GUARDED_BY(mutex_) = 0;
};

}  // namespace skillbox::runner
