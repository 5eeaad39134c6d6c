// pg/db_backend.cpp — see db_backend.h.
#include "pg/db_backend.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "base/skill_id.h"
#include "pg/bytea.h"

namespace skillbox::pg {
namespace {

using bus::ErrorCode;
using bus::ErrorReply;

// $1 tenant, $2 skill throughout. The lock key: PostgreSQL's own 64-bit text hash of "tenant/skill"
// (neither may hold '/'), seeded with "SkBx"; a collision only makes two skills' leases exclude each
// other.
const std::string kLockKey = "hashtextextended($1 || '/' || $2, 1399538296)";
const std::string kTryLock = "SELECT pg_try_advisory_lock(" + kLockKey + ")";
const std::string kUnlock = "SELECT pg_advisory_unlock(" + kLockKey + ")";
const std::string kGrant =
    "INSERT INTO bundle_databases (tenant, skill, fence) VALUES ($1, $2, 1) "
    "ON CONFLICT (tenant, skill) DO UPDATE SET fence = bundle_databases.fence + 1 RETURNING fence";
const std::string kFenceAndSize = "SELECT fence, size FROM bundle_databases WHERE tenant = $1 AND skill = $2";
const std::string kImage =
    "SELECT image FROM bundle_databases WHERE tenant = $1 AND skill = $2 AND fence = $3";
const std::string kReplace =
    "UPDATE bundle_databases SET image = $4::bytea, size = $5, updated_at = now() "
    "WHERE tenant = $1 AND skill = $2 AND fence = $3 AND image IS DISTINCT FROM $4::bytea";

ErrorReply io_error(const std::string& what, const PgError& e) {
  return ErrorReply{ErrorCode::IoError, "db: " + what + ": " + e.message};
}

std::optional<int64_t> to_int(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  try {
    size_t used = 0;
    const int64_t v = std::stoll(*text, &used);
    return used == text->size() ? std::optional<int64_t>(v) : std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

class PgDbLease final : public state::DbLease {
 public:
  PgDbLease(Pool::Lease conn, std::string tenant, std::string skill, int64_t fence)
      : conn_(std::move(conn)),
        tenant_(std::move(tenant)),
        skill_(std::move(skill)),
        fence_(std::to_string(fence)) {}

  ~PgDbLease() override {
    // A connection that still held the lock would hold it for its next user, forever: closed instead.
    auto unlocked = conn_->exec("releasing a bundle database's lease", kUnlock, {tenant_, skill_});
    if (!unlocked || unlocked->empty() || unlocked->at(0, 0) != "t") conn_.close();
  }
  PgDbLease(const PgDbLease&) = delete;
  PgDbLease& operator=(const PgDbLease&) = delete;

  Result<bus::Bytes, ErrorReply> read_image(uint64_t max_image_bytes) override {
    auto row = conn_->exec("reading a bundle database's size", kFenceAndSize, {tenant_, skill_});
    if (!row) return io_error("read the skill's database", row.error());
    if (auto lost = lease_lost(*row, "nothing was read")) return *lost;
    const std::optional<int64_t> size = to_int(row->at(0, 1));
    if (!size || *size < 0) return damaged("its size");
    if (static_cast<uint64_t>(*size) > max_image_bytes) {
      return ErrorReply{ErrorCode::PayloadTooLarge, "db: the database is " + std::to_string(*size) +
                                                        " bytes; an invocation holds at most " +
                                                        std::to_string(max_image_bytes) + " in memory"};
    }
    auto image = conn_->exec("reading a bundle database", kImage, {tenant_, skill_, fence_});
    if (!image) return io_error("read the skill's database", image.error());
    if (image->empty()) return lost_error("nothing was read");
    std::optional<std::string> bytes = from_bytea(image->at(0, 0));
    if (!bytes || bytes->size() != static_cast<uint64_t>(*size)) return damaged("its image");
    bus::Bytes out(bytes->begin(), bytes->end());
    // A damaged image is reported and left alone (see the local backend): the operator decides.
    if (!state::looks_like_sqlite(out)) return damaged("its image (not a SQLite database)");
    return out;
  }

  Result<void, ErrorReply> replace_image(std::span<const uint8_t> image) override {
    if (!state::looks_like_sqlite(image))
      return ErrorReply{ErrorCode::InvalidArgument,
                        "db: the new image is not a SQLite database; nothing was stored"};
    if (image.size() > kMaxImageBytes) {
      return ErrorReply{ErrorCode::IoError, "db: the new image is too large (" +
                                                std::to_string(image.size()) +
                                                " bytes; the database keeps at most " +
                                                std::to_string(kMaxImageBytes) + "); nothing was stored"};
    }
    const std::string hex =
        to_bytea(std::string_view(reinterpret_cast<const char*>(image.data()), image.size()));
    const std::string size = std::to_string(image.size());
    auto written = conn_->exec("writing a bundle database", kReplace, {tenant_, skill_, fence_, hex, size});
    if (!written) return io_error("write the skill's database", written.error());
    if (written->affected == 1) return {};
    // Nothing updated: the image was the same (nothing to write), or the lease was lost.
    auto row = conn_->exec("checking a bundle database's lease", kFenceAndSize, {tenant_, skill_});
    if (!row) return io_error("write the skill's database", row.error());
    if (auto lost = lease_lost(*row, "nothing was stored")) return *lost;
    return {};
  }

 private:
  /// The refusal when `row` (fence, size) shows another lease than this one.
  std::optional<ErrorReply> lease_lost(const Rows& row, const std::string& consequence) const {
    if (!row.empty() && row.at(0, 0) == fence_) return std::nullopt;
    return lost_error(consequence);
  }
  ErrorReply lost_error(const std::string& consequence) const {
    return ErrorReply{ErrorCode::IoError,
                      "db: this invocation's lease on the skill's database was lost (another invocation "
                      "holds it now: fencing token " +
                          fence_ + " is stale); " + consequence};
  }
  ErrorReply damaged(const std::string& what) const {
    // No URL here: the message reaches the skill. The operator finds the row by tenant and skill.
    return ErrorReply{ErrorCode::IoError, "db: the skill's database (tenant " + tenant_ + ", skill " +
                                              skill_ + ") is damaged: " + what +
                                              " cannot be read; skillbox left it as it is"};
  }

  Pool::Lease conn_;
  const std::string tenant_;
  const std::string skill_;
  const std::string fence_;
};

class PgDbBackend final : public state::DbBackend {
 public:
  PgDbBackend(std::shared_ptr<Pool> pool, std::string tenant)
      : pool_(std::move(pool)), tenant_(std::move(tenant)) {}

  Result<std::unique_ptr<state::DbLease>, ErrorReply> acquire(std::string_view skill_id,
                                                              const bus::StopToken& stop) override {
    if (!base::is_valid_skill_id(skill_id))
      return ErrorReply{ErrorCode::IoError, "db: open the database: the skill id is not a valid folder name"};
    const std::string skill(skill_id);
    const auto deadline =
        std::min(stop.deadline(), std::chrono::steady_clock::now() + std::chrono::seconds(30));
    PgResult<Pool::Lease> conn = pool_->acquire(deadline);
    if (!conn) {
      if (conn.error().pool_exhausted && stop.stop_requested()) return timeout();
      return io_error("open the skill's database", conn.error());
    }
    // The lease: one invocation of the skill at a time, in any replica. A waiter asks again with backoff
    // (1 ms doubling to 20 ms), so it notices a release within 20 ms, and gives up at its stop token.
    auto backoff = std::chrono::milliseconds(1);
    for (;;) {
      auto got = (*conn)->exec("taking a bundle database's lease", kTryLock, {tenant_, skill});
      if (!got) return io_error("lock the skill's database", got.error());
      if (!got->empty() && got->at(0, 0) == "t") break;
      if (stop.stop_requested()) return timeout();
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(20));
    }
    // From here until the lease owns the connection, any way out (an error, an exception) closes it:
    // a pooled connection must never go back still holding the lock.
    struct CloseUnlessKept {
      Pool::Lease* conn;
      ~CloseUnlessKept() {
        if (conn != nullptr) conn->close();
      }
    } guard{&*conn};
    auto granted = (*conn)->exec("granting a bundle database's lease", kGrant, {tenant_, skill});
    std::optional<int64_t> fence = granted && !granted->empty() ? to_int(granted->at(0, 0)) : std::nullopt;
    if (!fence) {
      if (!granted) return io_error("lock the skill's database", granted.error());
      return ErrorReply{ErrorCode::IoError, "db: lock the skill's database: no fencing token came back"};
    }
    auto lease = std::make_unique<PgDbLease>(std::move(*conn), tenant_, skill, *fence);
    guard.conn = nullptr;
    return std::unique_ptr<state::DbLease>(std::move(lease));
  }

 private:
  static ErrorReply timeout() {
    return ErrorReply{ErrorCode::Timeout,
                      "db: another invocation of this skill held its database until this invocation's "
                      "deadline (an invocation holds the database from its first db call to its end)"};
  }

  const std::shared_ptr<Pool> pool_;
  const std::string tenant_;
};

}  // namespace

std::shared_ptr<state::DbBackend> make_pg_db_backend(std::shared_ptr<Pool> pool, std::string tenant) {
  return std::make_shared<PgDbBackend>(std::move(pool), std::move(tenant));
}

}  // namespace skillbox::pg
