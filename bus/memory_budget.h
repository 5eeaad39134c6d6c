// bus/memory_budget.h — one invocation's memory: the engine heap plus every host buffer held for it.
//
// `limits.memory_mb` bounds what one invocation costs its host, not just its JS heap (SECURITY-CASES
// "Host memory is part of the budget": with memory_mb 16, eight concurrent 200 MB responses drove the
// host to 1.3 GiB). So the host-side buffers of an invocation (HTTP request and response bodies and
// headers, fs read and write buffers, store values, log text, the skill's sources, replies waiting in
// the inbox) are counted here together with the engine heap, and at every moment
//
//     engine heap + host bytes <= limit
//
// Whoever holds a buffer reserves its bytes *before* allocating it (HostBytes::grow) and gives them
// back when it frees it (HostBytes's destructor). A refused reservation is the holder's to report:
// capabilities answer PayloadTooLarge naming limits.memory_mb; the engine's allocator refuses like at
// its own limit (memory_limit). The engine figure is whatever the engine side reports: in-process the
// allocator (engine/heap.cpp) publishes its count on every change; in worker mode the supervisor sets
// the figure the worker reports, and counts the host buffers it holds itself. Plain atomics, no engine
// type: capabilities, the engine and a supervisor can share one object.
//
// The two figures are read without a common lock, so two reservations racing on different threads can
// overshoot by at most one of them; every buffer is also capped by its own limit (max_response_bytes,
// max_file_bytes, ...), which bounds that overshoot.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

namespace skillbox::bus {

class MemoryBudget {
 public:
  /// A budget of `limit_bytes` for engine heap and host bytes together.
  explicit MemoryBudget(uint64_t limit_bytes = std::numeric_limits<uint64_t>::max()) : limit_(limit_bytes) {}
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  /// Counts `n` more host bytes if engine + host + n stays within the limit; false (nothing counted)
  /// otherwise. Any thread.
  [[nodiscard]] bool try_reserve(uint64_t n) noexcept {
    uint64_t host = host_.load(std::memory_order_relaxed);
    for (;;) {
      const uint64_t engine = engine_.load(std::memory_order_relaxed);
      if (n > limit_ || host + engine > limit_ - n) return false;
      if (host_.compare_exchange_weak(host, host + n, std::memory_order_relaxed)) break;
    }
    note_peak(host + n);
    return true;
  }

  /// Counts `n` host bytes that already exist (a buffer handed over from a holder that did not count
  /// it, e.g. a decoded frame), even past the limit. Returns whether the total is still within it.
  bool charge(uint64_t n) noexcept {
    const uint64_t host = host_.fetch_add(n, std::memory_order_relaxed) + n;
    note_peak(host);
    return host + engine_.load(std::memory_order_relaxed) <= limit_;
  }

  /// Gives back `n` host bytes counted earlier. Any thread.
  void release(uint64_t n) noexcept { host_.fetch_sub(n, std::memory_order_relaxed); }

  /// The engine heap as its allocator (or the worker's report) sees it, in bytes.
  void set_engine_bytes(uint64_t n) noexcept { engine_.store(n, std::memory_order_relaxed); }

  [[nodiscard]] uint64_t limit() const noexcept { return limit_; }
  [[nodiscard]] uint64_t engine_bytes() const noexcept { return engine_.load(std::memory_order_relaxed); }
  [[nodiscard]] uint64_t host_bytes() const noexcept { return host_.load(std::memory_order_relaxed); }
  /// The most host bytes ever counted at once (RunResult::usage.host_peak_bytes).
  [[nodiscard]] uint64_t host_peak_bytes() const noexcept {
    return host_peak_.load(std::memory_order_relaxed);
  }

  /// "N bytes do not fit limits.memory_mb (L bytes: E of engine heap and H of host buffers in use)":
  /// the end of every refusal message, so each names the limit and what uses it.
  [[nodiscard]] std::string refusal(uint64_t n) const {
    return std::to_string(n) + " more bytes do not fit the invocation's memory limit (limits.memory_mb: " +
           std::to_string(limit_) + " bytes, of which " + std::to_string(engine_bytes()) +
           " are JS heap and " + std::to_string(host_bytes()) + " host buffers in use)";
  }

 private:
  void note_peak(uint64_t host) noexcept {
    uint64_t peak = host_peak_.load(std::memory_order_relaxed);
    while (host > peak && !host_peak_.compare_exchange_weak(peak, host, std::memory_order_relaxed)) {
    }
  }

  const uint64_t limit_;
  std::atomic<uint64_t> engine_{0};
  std::atomic<uint64_t> host_{0};
  std::atomic<uint64_t> host_peak_{0};
};

/// Host bytes reserved from a MemoryBudget for one buffer, given back when this object goes away.
/// Travels with the buffer it counts (a reply holds the reservation of its body), so the bytes stay
/// counted while the reply waits in the inbox and while it is decoded into JS values. Without a budget
/// (nullptr) every reservation succeeds and nothing is counted.
///
/// A copy counts nothing (it is a new, empty reservation): messages are copied only by tests and by
/// error paths that copy small replies. Compares equal to every other HostBytes, so message equality
/// stays about the values.
class HostBytes {
 public:
  HostBytes() = default;
  explicit HostBytes(MemoryBudget* budget) noexcept : budget_(budget) {}
  ~HostBytes() { reset(); }
  HostBytes(HostBytes&& other) noexcept
      : budget_(std::exchange(other.budget_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  HostBytes& operator=(HostBytes&& other) noexcept {
    if (this != &other) {
      reset();
      budget_ = std::exchange(other.budget_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  HostBytes(const HostBytes& /*other*/) noexcept {}
  HostBytes& operator=(const HostBytes& other) noexcept {
    if (this != &other) reset();
    return *this;
  }
  bool operator==(const HostBytes& /*other*/) const noexcept { return true; }

  /// Reserves `n` more bytes; false (nothing changed) when they do not fit.
  [[nodiscard]] bool grow(uint64_t n) noexcept {
    if (budget_ == nullptr) return true;
    if (!budget_->try_reserve(n)) return false;
    bytes_ += n;
    return true;
  }
  /// Counts `n` more bytes that already exist, past the limit if need be (MemoryBudget::charge).
  bool charge(uint64_t n) noexcept {
    if (budget_ == nullptr) return true;
    bytes_ += n;
    return budget_->charge(n);
  }
  /// Gives back `n` of the bytes reserved (at most all of them).
  void shrink(uint64_t n) noexcept {
    if (n > bytes_) n = bytes_;
    if (budget_ != nullptr && n > 0) budget_->release(n);
    bytes_ -= n;
  }
  /// Gives back everything; the budget is kept for later reservations.
  void reset() noexcept { shrink(bytes_); }

  [[nodiscard]] uint64_t bytes() const noexcept { return bytes_; }
  [[nodiscard]] MemoryBudget* budget() const noexcept { return budget_; }

 private:
  MemoryBudget* budget_ = nullptr;
  uint64_t bytes_ = 0;
};

}  // namespace skillbox::bus
