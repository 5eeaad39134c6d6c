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

Result<bus::SkillSources> SourceCache::read(const std::filesystem::path& dir, std::string_view entry,
                                            const Limits& limits) {
  Key key{dir.string(), std::string(entry), limits.memory_bytes, limits.stack_bytes};
  Entry cached;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = entries_.find(key); it != entries_.end()) cached = it->second;
  }
  // The stats run outside the lock: invocations of other skills do not wait for them.
  if (cached.sources && still_valid(dir, cached.stamps, cached.read_at_ns, racy_window_)) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++hits_;
    return *cached.sources;
  }

  Entry fresh;
  fresh.read_at_ns = realtime_ns();
  auto sources = read_skill_sources(dir, entry, limits, openat2_, &fresh.stamps);
  if (!sources) return sources;
  for (const auto& [name, text] : sources->files) fresh.bytes += name.size() + text.size();
  if (fresh.bytes > kMaxBytes) return sources;
  fresh.sources = std::make_shared<const bus::SkillSources>(*sources);

  std::lock_guard<std::mutex> lock(mutex_);
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
  return sources;
}

uint64_t SourceCache::hits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hits_;
}

}  // namespace skillbox::runner
