// server/audit.cpp — see audit.h.
#include "server/audit.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/errno_text.h"
#include "base/json_text.h"
#include "base/skill_id.h"
#include "server/skill_digest.h"
#include "skillbox/json.h"

namespace skillbox::server {
namespace {

using ojson = nlohmann::ordered_json;

Result<int> open_append(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Error{"cannot open the audit file " + path + ": " + base::errno_text(errno)};
  return fd;
}

/// `text` as a JSON string, or null when empty.
ojson text_or_null(std::string_view text) {
  return text.empty() ? ojson(nullptr) : ojson(std::string(text));
}

/// A JSON object the API built (usage, permissions), or null.
ojson object_or_null(std::string_view json) {
  if (json.empty()) return nullptr;
  return base::json_text::parse_ordered(json);
}

}  // namespace

AuditLog::AuditLog(std::string sink, int fd, AuditBatchWriter database)
    : sink_(std::move(sink)), database_(std::move(database)), fd_(fd) {
  if (database_) storer_ = std::thread([this] { store_loop(); });
}

AuditLog::~AuditLog() {
  if (storer_.joinable()) {
    {
      base::MutexLock lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    storer_.join();
  }
  base::MutexLock lock(mu_);
  if (fd_ > STDERR_FILENO) ::close(fd_);
}

Result<std::unique_ptr<AuditLog>> AuditLog::open(const std::string& sink, AuditBatchWriter database) {
  if (sink == "stdout") return std::unique_ptr<AuditLog>(new AuditLog(sink, STDOUT_FILENO, {}));
  if (sink == "database") {
    if (!database) return Error{"audit = \"database\" needs a database: give [database] url or --database"};
    return std::unique_ptr<AuditLog>(new AuditLog(sink, STDERR_FILENO, std::move(database)));
  }
  Result<int> fd = open_append(sink);
  if (!fd) return fd.error();
  return std::unique_ptr<AuditLog>(new AuditLog(sink, *fd, {}));
}

// The database sink's thread: batches of pending lines, kept and tried again while the database fails.
void AuditLog::store_loop() {
  constexpr size_t kBatch = 500;
  const auto give_up_at = [] { return std::chrono::steady_clock::now() + std::chrono::seconds(5); };
  std::optional<std::chrono::steady_clock::time_point> stop_deadline;
  bool failing = false;
  for (;;) {
    std::vector<std::string> batch;
    {
      base::MutexLock lock(mu_);
      lock.wait_for(wake_, std::chrono::milliseconds(failing ? 1000 : 200), [this] {
        mu_.assert_held();
        return stopping_ || pending_.size() >= kBatch;
      });
      if (stopping_ && !stop_deadline) stop_deadline = give_up_at();
      const bool out_of_time = stop_deadline && std::chrono::steady_clock::now() >= *stop_deadline;
      if (pending_.empty() || out_of_time) {
        if (stopping_) {
          // What could not be stored in time goes where an operator sees it.
          for (const std::string& line : pending_)
            (void)std::fprintf(stderr, "skillbox serve: audit (not stored): %s", line.c_str());
          pending_.clear();
          return;
        }
        continue;
      }
      for (size_t i = 0; i < kBatch && i < pending_.size(); ++i) batch.push_back(pending_[i]);
    }
    Result<void> stored = database_(batch);
    base::MutexLock lock(mu_);
    if (stored) {
      pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(batch.size()));
      if (failing) (void)std::fprintf(stderr, "skillbox serve: the audit is stored in the database again\n");
      failing = false;
    } else if (!failing) {
      failing = true;
      (void)std::fprintf(
          stderr,
          "skillbox serve: cannot store the audit in the database (%zu lines kept, tried again "
          "every second): %s\n",
          pending_.size(), stored.error().message.c_str());
    }
  }
}

Result<void> AuditLog::reopen() {
  if (sink_ == "stdout" || sink_ == "database") return {};
  Result<int> fd = open_append(sink_);
  if (!fd) return fd.error();
  base::MutexLock lock(mu_);
  ::close(fd_);
  fd_ = *fd;
  reported_ = false;
  return {};
}

void AuditLog::record(std::string_view request_id, std::string_view method, const HttpResponse& response) {
  const RequestFacts& f = response.facts;
  ojson line;
  line["time"] = rfc3339_utc_now();
  line["request_id"] = std::string(request_id);
  line["tenant"] = text_or_null(response.tenant);
  line["method"] = text_or_null(method == "-" ? "" : method);
  line["route"] = text_or_null(f.route);
  line["status"] = response.status;
  // Only an id that passed the id rule: anything else a client sent is not worth keeping, and may be
  // what it meant to hide in a log.
  line["skill"] = base::is_valid_skill_id(f.skill) ? ojson(f.skill) : ojson(nullptr);
  line["digest"] = is_digest(f.digest) ? ojson(f.digest) : ojson(nullptr);
  line["export"] = text_or_null(f.export_name);
  line["outcome"] = text_or_null(response.outcome);
  line["usage"] = object_or_null(f.usage_json);
  line["origins"] = f.origins_json.empty() ? ojson(nullptr) : base::json_text::parse_ordered(f.origins_json);
  line["permissions"] = object_or_null(f.permissions_json);
  write_line(base::json_text::write(line) + "\n");
}

void AuditLog::write_line(const std::string& text) {
  base::MutexLock lock(mu_);
  if (database_) {
    if (pending_.size() < kMaxPendingLines) {
      pending_.push_back(text);
      if (pending_.size() == 500) wake_.notify_one();
    } else {
      (void)std::fprintf(stderr, "skillbox serve: audit (not stored): %s", text.c_str());
    }
    return;
  }
  const ssize_t n = ::write(fd_, text.data(), text.size());
  if (n != static_cast<ssize_t>(text.size()) && !reported_) {
    reported_ = true;
    const std::string why = n < 0 ? base::errno_text(errno) : "a short write";
    (void)std::fprintf(stderr, "skillbox serve: cannot write the audit to %s: %s\n", sink_.c_str(),
                       why.c_str());
  }
}

std::string usage_json(const RunResult& result) {
  const nlohmann::ordered_json whole = base::json_text::parse_ordered(to_json(result));
  return base::json_text::write(whole.at("usage"));
}

std::string permission_summary_json(const Policy& policy) {
  ojson p;
  p["fs"] = std::string(to_string(policy.fs.mode));
  p["http_allow"] = policy.http.allow.texts();
  p["env"] = policy.env;
  return base::json_text::write(p);
}

std::string rfc3339_utc_now() {
  return rfc3339_utc(std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count());
}

std::string rfc3339_utc(int64_t ms_since_epoch) {
  const auto seconds = static_cast<std::time_t>(ms_since_epoch / 1000);
  const auto ms = ms_since_epoch % 1000;
  std::tm tm{};
  ::gmtime_r(&seconds, &tm);
  char text[32];
  const size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  (void)std::snprintf(out, sizeof out, "%.*s.%03dZ", static_cast<int>(n), text, static_cast<int>(ms));
  return out;
}

}  // namespace skillbox::server
