// server/origin_tap.h — the origins a run contacted, for the server's audit line (docs/server.md
// "Audit"): the runner records them in the tenant's audit record (state/audit_sink.h AuditRecord::
// origins, filled from the http capability's hops); a tap between the runner and the tenant's own sink
// keeps a copy for the request that ran it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "skillbox/tenant.h"
#include "state/audit_sink.h"

namespace skillbox::server {

/// An audit sink that keeps the origins of the record it is given and passes the record on to the
/// tenant's own sink (if any). One per run.
class OriginTap final : public state::AuditSink {
 public:
  explicit OriginTap(std::shared_ptr<state::AuditSink> next) : next_(std::move(next)) {}
  [[nodiscard]] Result<void> record(const state::AuditRecord& record) override;
  /// The origins of the record, as a JSON array; "" when no record came (the run never reached the
  /// runner's audit).
  [[nodiscard]] std::string origins_json() const;

 private:
  std::shared_ptr<state::AuditSink> next_;
  mutable base::Mutex mu_;
  bool recorded_ SKILLBOX_GUARDED_BY(mu_) = false;
  std::vector<std::string> origins_ SKILLBOX_GUARDED_BY(mu_);
};

/// A tenant for one run, and the tap its audit record goes through.
struct TappedTenant {
  std::shared_ptr<const TenantContext> context;
  std::shared_ptr<OriginTap> tap;
};

/// `tenant` for one run: the same backends, env values, credentials, origin map and ceilings, with a
/// new OriginTap in front of its audit sink.
[[nodiscard]] TappedTenant tap_origins(const TenantContext& tenant);

}  // namespace skillbox::server
