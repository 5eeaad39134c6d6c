// runner/live_run.h — what the caller's side sees of a run while it goes: the embedder's Observer,
// and a copy of every log line, so that a run that is cut off (abandoned at its deadline, cancelled
// during a native call) still reports the lines it wrote.
//
// One LiveRun per invocation, shared by the runner's threads of that invocation. Every callback of
// the Observer is made under one mutex, so an embedder never sees two at once for one run, and
// close() waits for a callback in flight: after close() returns no callback runs, which is what lets
// Runner::run() promise "never after run() returned".
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "bus/messages.h"
#include "skillbox/skillbox.h"

namespace skillbox::runner {

/// Longest RunEvent::detail, in bytes after escaping: a URL or a path with room to spare, while a
/// skill cannot make an event line long.
inline constexpr size_t kMaxEventDetailBytes = 512;

class LiveRun {
 public:
  explicit LiveRun(Observer observer) : observer_(std::move(observer)) {}
  LiveRun(const LiveRun&) = delete;
  LiveRun& operator=(const LiveRun&) = delete;

  /// Records a copy of `entry` and passes it to Observer::on_log with the current time, unless closed.
  void log(const LogEntry& entry);
  /// Passes an event to Observer::on_event with the current time, unless closed. `detail` is escaped
  /// and capped at kMaxEventDetailBytes here.
  void event(RunEvent::Kind kind, std::string_view detail);
  /// Passes a bundle's Event to Observer::on_event as RunEvent::Kind::skill_event (detail = its type,
  /// escaped and capped like any detail; data_json as it is), unless closed.
  void skill_event(const Event& event);
  /// True when an on_event callback is set (so callers can skip describing requests nobody reads).
  [[nodiscard]] bool wants_events() const { return static_cast<bool>(observer_.on_event); }

  /// After this returns no callback is running and none will run; log() still records copies.
  void close();
  /// The copies recorded so far, moved out (for a run whose result is made without the JS thread).
  std::vector<LogEntry> take_logs();

 private:
  base::Mutex mutex_;
  bool open_ SKILLBOX_GUARDED_BY(mutex_) = true;
  const Observer observer_;
  std::vector<LogEntry> logs_ SKILLBOX_GUARDED_BY(mutex_);
};

/// The RunEvent::detail of a host request: the function and its main argument ("http GET URL",
/// "fs.writeFile PATH", "store.set KEY", "env.get NAME"). Not escaped yet (LiveRun::event does it).
/// A LogRequest gives an empty string (a log line is reported as a line, not as an event).
[[nodiscard]] std::string describe_request(const bus::Request& request);

}  // namespace skillbox::runner
