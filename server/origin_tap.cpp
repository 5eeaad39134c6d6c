// server/origin_tap.cpp — see origin_tap.h.
#include "server/origin_tap.h"

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "state/backends.h"

namespace skillbox::server {

Result<void> OriginTap::record(const state::AuditRecord& record) {
  {
    base::MutexLock lock(mu_);
    recorded_ = true;
    origins_ = record.origins;
  }
  return next_ ? next_->record(record) : Result<void>{};
}

std::string OriginTap::origins_json() const {
  base::MutexLock lock(mu_);
  if (!recorded_) return {};
  return base::json_text::write(nlohmann::ordered_json(origins_));
}

TappedTenant tap_origins(const TenantContext& tenant) {
  auto context = std::make_shared<TenantContext>(tenant);
  auto tap = std::make_shared<OriginTap>(tenant.state ? tenant.state->audit : nullptr);
  if (tenant.state) {
    auto backends = std::make_shared<state::Backends>(*tenant.state);
    backends->audit = tap;
    context->state = std::move(backends);
  }
  return TappedTenant{.context = std::move(context), .tap = std::move(tap)};
}

}  // namespace skillbox::server
