// capabilities/db/db_capability.h — the skill's own SQLite database (`db` of OpenHuman bundles).
//
// One file per skill, DATA/skills/<id>/db.sqlite: in the data directory, never in the workspace the
// skill can write, so no fs call can reach or replace it. One connection per invocation, opened on
// the first request and closed with the invocation; a transaction still open then is rolled back.
// What a statement may do is fenced by an authorizer (no ATTACH/DETACH, no load_extension, no virtual
// table but FTS5, only pragmas that read the schema), the file's size by `max_page_count`
// (permissions.db.quota_bytes), and its time by a progress handler that stops it when the
// invocation's StopToken is raised (a limit or the deadline). docs/openhuman.md "db".
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "bus/messages.h"
#include "bus/stop_token.h"
#include "skillbox/policy.h"

namespace skillbox::capabilities {

class DbCapability {
 public:
  DbCapability(std::filesystem::path data_dir, std::string skill_id, DbPolicy policy,
               const bus::StopToken& stop);
  ~DbCapability();  // rolls back an open transaction, closes the connection
  DbCapability(const DbCapability&) = delete;
  DbCapability& operator=(const DbCapability&) = delete;

  /// Runs exactly one statement. Reply: OptionalStringReply with JSON text (exec: rows changed; get:
  /// the first row object or null; all: an array of row objects), or ErrorReply: PermissionDenied (the
  /// authorizer refused, the message says what), QuotaExceeded (the file would outgrow
  /// permissions.db.quota_bytes), PayloadTooLarge (a value or the result is too large), Timeout (the
  /// invocation ended while it ran), InvalidArgument (SQL errors, several statements, bad params).
  bus::Reply handle(const bus::DbRequest& request);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace skillbox::capabilities
