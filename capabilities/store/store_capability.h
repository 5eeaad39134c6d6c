// capabilities/store/store_capability.h — the per-skill key-value store (`store.*`), on a
// state::StoreBackend.
#pragma once

#include <memory>
#include <string>

#include "bus/memory_budget.h"
#include "bus/messages.h"
#include "bus/stop_token.h"
#include "skillbox/policy.h"
#include "state/store_backend.h"

namespace skillbox::capabilities {

/// Serves the store requests of one invocation from the tenant's StoreBackend (state/store_backend.h),
/// scoped to one skill id with the manifest's StorePolicy (quotas are checked by the backend, in the
/// write's transaction). The skill's session is opened on the first request, so an invocation that never
/// uses the store never touches storage. See docs/store.md.
///
/// Replies: get -> OptionalStringReply (JSON text, nullopt for a missing key); set -> OkReply;
/// delete -> BoolReply (whether the key existed); keys -> StringListReply (sorted by UTF-8 bytes);
/// increment -> NumberReply (the new value); compareAndSet -> BoolReply (whether it wrote).
/// Errors: InvalidArgument (bad key/prefix/value/delta, a non-number under an incremented key),
/// QuotaExceeded (nothing changed), Timeout (another process held the database past the busy timeout),
/// IoError (database damaged, from a newer skillbox, or unwritable). Messages never contain host paths.
class StoreCapability {
 public:
  /// `backend` (not null) holds the tenant's store. `stop` (must outlive this) bounds the backend's lock
  /// waits: no store call waits for a write lock past the invocation's deadline (Timeout). `memory` (may
  /// be null: nothing counted) is the invocation's memory budget: a value read or written is counted
  /// there while it is held, and one that does not fit is refused with PayloadTooLarge.
  StoreCapability(std::shared_ptr<state::StoreBackend> backend, std::string skill_id, StorePolicy policy,
                  const bus::StopToken& stop = bus::StopToken::never(), bus::MemoryBudget* memory = nullptr);
  ~StoreCapability();
  StoreCapability(const StoreCapability&) = delete;
  StoreCapability& operator=(const StoreCapability&) = delete;

  bus::Reply handle(const bus::StoreGetRequest& r);
  bus::Reply handle(const bus::StoreSetRequest& r);
  bus::Reply handle(const bus::StoreDeleteRequest& r);
  bus::Reply handle(const bus::StoreKeysRequest& r);
  bus::Reply handle(const bus::StoreIncrementRequest& r);
  bus::Reply handle(const bus::StoreCompareAndSetRequest& r);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace skillbox::capabilities
