// capabilities/store/store_capability.h — the per-skill key-value store (`store.*`), on SQLite.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "bus/memory_budget.h"
#include "bus/messages.h"
#include "bus/stop_token.h"
#include "skillbox/policy.h"

namespace skillbox::capabilities {

/// Serves the store requests of one invocation from DATA/store.sqlite (skillbox/store.h), scoped to
/// one skill id with the manifest's StorePolicy. The database is opened on the first request, so an
/// invocation that never uses the store never touches SQLite. See docs/store.md.
///
/// Replies: get -> OptionalStringReply (JSON text, nullopt for a missing key); set -> OkReply;
/// delete -> BoolReply (whether the key existed); keys -> StringListReply (sorted by UTF-8 bytes).
/// Errors: InvalidArgument (bad key/prefix/value), QuotaExceeded (nothing changed), Timeout (another
/// process held the database past the busy timeout), IoError (database damaged, from a newer
/// skillbox, or unwritable). Messages never contain host paths.
class StoreCapability {
 public:
  /// `stop` (must outlive this) bounds SQLite's busy wait: no store call waits for a write lock past
  /// the invocation's deadline (Timeout). `memory` (may be null: nothing counted) is the invocation's
  /// memory budget: a value read or written is counted there while it is held, and one that does not
  /// fit is refused with PayloadTooLarge.
  StoreCapability(std::filesystem::path data_dir, std::string skill_id, StorePolicy policy,
                  const bus::StopToken& stop = bus::StopToken::never(), bus::MemoryBudget* memory = nullptr);
  ~StoreCapability();
  StoreCapability(const StoreCapability&) = delete;
  StoreCapability& operator=(const StoreCapability&) = delete;

  bus::Reply handle(const bus::StoreGetRequest& r);
  bus::Reply handle(const bus::StoreSetRequest& r);
  bus::Reply handle(const bus::StoreDeleteRequest& r);
  bus::Reply handle(const bus::StoreKeysRequest& r);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace skillbox::capabilities
