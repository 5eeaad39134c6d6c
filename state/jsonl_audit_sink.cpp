// state/jsonl_audit_sink.cpp — the AuditSink that appends JSON lines to a file (audit_sink.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <mutex>
#include <nlohmann/json.hpp>
#include <system_error>
#include <utility>

#include "base/errno_text.h"
#include "base/unique_fd.h"
#include "state/audit_sink.h"

namespace skillbox::state {
namespace {

using json = nlohmann::ordered_json;

/// RFC 3339 UTC with milliseconds, e.g. "2026-12-03T19:30:00.123Z".
std::string rfc3339(std::chrono::system_clock::time_point at) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(at.time_since_epoch()).count();
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[40];
  const size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  char frac[8];
  std::snprintf(frac, sizeof frac, ".%03dZ", static_cast<int>(ms % 1000));
  return std::string(text, n) + frac;
}

std::string line_of(const AuditRecord& r) {
  const Usage& u = r.usage;
  const json usage = {{"wall_ms", u.wall_ms},
                      {"cpu_ms", u.cpu_ms},
                      {"steps", u.steps},
                      {"heap_peak_bytes", u.heap_peak_bytes},
                      {"host_calls", u.host_calls},
                      {"http_bytes_in", u.http_bytes_in},
                      {"http_bytes_out", u.http_bytes_out}};
  const json line = {{"time", rfc3339(r.started)},
                     {"tenant", r.tenant},
                     {"skill", r.skill_id},
                     {"export", r.export_name},
                     {"outcome", std::string(to_string(r.outcome))},
                     {"error", r.error_name.empty() ? json(nullptr) : json(r.error_name)},
                     {"usage", usage},
                     {"origins", r.origins}};
  // ASCII with \u escapes, invalid UTF-8 replaced: one line of plain text whatever an id or name holds.
  return line.dump(-1, ' ', /*ensure_ascii=*/true, json::error_handler_t::replace) + "\n";
}

class JsonlAuditSink final : public AuditSink {
 public:
  JsonlAuditSink(std::filesystem::path file, bool sync) : file_(std::move(file)), sync_(sync) {}

  Result<void> record(const AuditRecord& record) override {
    const std::string line = line_of(record);
    std::lock_guard<std::mutex> lock(mu_);
    if (!fd_) {
      if (auto opened = open(); !opened) return opened.error();
    }
    // One write(2) with O_APPEND: the line lands whole at the end, whoever else appends.
    const ssize_t n = ::write(fd_.get(), line.data(), line.size());
    if (n < 0 || static_cast<size_t>(n) != line.size()) {
      const int err = n < 0 ? errno : ENOSPC;
      fd_.reset();  // reopen next time (the file may have been rotated or the disk freed)
      return Error{"audit: cannot append to " + file_.string() + ": " + base::errno_text(err)};
    }
    if (sync_ && ::fdatasync(fd_.get()) != 0)
      return Error{"audit: cannot sync " + file_.string() + ": " + base::errno_text(errno)};
    return {};
  }

 private:
  Result<void> open() {
    if (file_.empty()) return Error{"audit: no data directory: set $SKILLBOX_HOME or pass --data-dir"};
    const std::filesystem::path folder = file_.parent_path();
    std::error_code ec;
    std::filesystem::create_directories(folder.parent_path(), ec);  // an error shows at mkdir below
    if (::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST)
      return Error{"audit: cannot create " + folder.string() + ": " + base::errno_text(errno)};
    fd_.reset(::open(file_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd_) return Error{"audit: cannot open " + file_.string() + ": " + base::errno_text(errno)};
    return {};
  }

  const std::filesystem::path file_;
  const bool sync_;
  std::mutex mu_;
  base::UniqueFd fd_;  // guarded by mu_
};

}  // namespace

std::shared_ptr<AuditSink> make_jsonl_audit_sink(std::filesystem::path file, bool sync) {
  return std::make_shared<JsonlAuditSink>(std::move(file), sync);
}

}  // namespace skillbox::state
