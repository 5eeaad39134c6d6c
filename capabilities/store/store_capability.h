// capabilities/store/store_capability.h — the per-skill key-value store (`store.*`), on SQLite.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "bus/messages.h"
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
  StoreCapability(std::filesystem::path data_dir, std::string skill_id, StorePolicy policy);
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
