// runner/source_cache.cpp — see source_cache.h.
#include "runner/source_cache.h"

#include <time.h>

#include <algorithm>

namespace skillbox::runner {
namespace {

int64_t realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

/// True when every stamp is as it was and none was younger than the racy window at `read_at_ns`.
bool still_valid(const std::filesystem::path& dir, const std::vector<SourceStamp>& stamps, int64_t read_at_ns,
                 std::chrono::milliseconds racy_window) {
  const int64_t settled = read_at_ns - std::chrono::nanoseconds(racy_window).count();
  for (const SourceStamp& s : stamps) {
    if (racy_window.count() > 0 && (s.mtime_ns >= settled || s.ctime_ns >= settled)) return false;
    if (stamp_of(dir, s.name, s.follow) != s) return false;
  }
  return true;
}

}  // namespace

std::optional<SourceCache::Entry> SourceCache::valid_entry(const Key& key, const std::filesystem::path& dir) {
  Entry cached;
  {
    base::MutexLock lock(mutex_);
    if (auto it = entries_.find(key); it != entries_.end()) cached = it->second;
  }
  // The stats run outside the lock: invocations of other skills do not wait for them.
  if (!cached.sources || !still_valid(dir, cached.stamps, cached.read_at_ns, racy_window_))
    return std::nullopt;
  base::MutexLock lock(mutex_);
  ++hits_;
  return cached;
}

void SourceCache::store(Key key, Entry fresh) {
  for (const auto& [name, text] : fresh.sources->files) fresh.bytes += name.size() + text.size();
  if (fresh.bytes > kMaxBytes) return;
  base::MutexLock lock(mutex_);
  if (auto it = entries_.find(key); it != entries_.end()) {
    bytes_ -= it->second.bytes;
    entries_.erase(it);
  }
  while (!entries_.empty() && (entries_.size() >= kMaxSkills || bytes_ + fresh.bytes > kMaxBytes)) {
    auto oldest = std::min_element(entries_.begin(), entries_.end(), [](const auto& a, const auto& b) {
      return a.second.sequence < b.second.sequence;
    });
    bytes_ -= oldest->second.bytes;
    entries_.erase(oldest);
  }
  fresh.sequence = next_sequence_++;
  bytes_ += fresh.bytes;
  entries_.emplace(std::move(key), std::move(fresh));
}

Result<bus::SkillSources> SourceCache::read(const std::filesystem::path& dir, std::string_view entry,
                                            const Limits& limits) {
  Key key{dir.string(), std::string(entry), limits.memory_bytes, limits.stack_bytes, false};
  if (std::optional<Entry> cached = valid_entry(key, dir)) return *cached->sources;

  Entry fresh;
  fresh.read_at_ns = realtime_ns();
  auto sources = read_skill_sources(dir, entry, limits, openat2_, &fresh.stamps);
  if (!sources) return sources;
  fresh.sources = std::make_shared<const bus::SkillSources>(*sources);
  store(std::move(key), std::move(fresh));
  return sources;
}

Result<SourceCache::Served> SourceCache::serve_entry(const std::filesystem::path& dir, std::string_view entry,
                                                     const Limits& limits) {
  Key key{dir.string(), std::string(entry), limits.memory_bytes, limits.stack_bytes, true};
  if (std::optional<Entry> cached = valid_entry(key, dir))
    return Served{*cached->sources, std::move(cached->stamps), cached->read_at_ns};

  Served fresh;
  fresh.read_at_ns = realtime_ns();
  auto name = entry_name(entry);
  if (!name) return name.error();
  auto reader = SourceReader::open(dir, limits, openat2_, &fresh.stamps);
  if (!reader) return reader.error();
  if (Result<void> read = reader->read_entry(*name, fresh.pool); !read) return read.error();
  return fresh;
}

void SourceCache::keep_served(const std::filesystem::path& dir, std::string_view entry, const Limits& limits,
                              Served served) {
  Key key{dir.string(), std::string(entry), limits.memory_bytes, limits.stack_bytes, true};
  Entry fresh;
  fresh.read_at_ns = served.read_at_ns;
  fresh.stamps = std::move(served.stamps);
  fresh.sources = std::make_shared<const bus::SkillSources>(std::move(served.pool));
  store(std::move(key), std::move(fresh));
}

uint64_t SourceCache::hits() const {
  base::MutexLock lock(mutex_);
  return hits_;
}

}  // namespace skillbox::runner
