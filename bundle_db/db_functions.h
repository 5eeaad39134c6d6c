// bundle_db/db_functions.h — SQL functions of the bundle database that stop at the deadline.
//
// SQLite's progress handler runs between VM instructions, never inside one SQL function call, and
// some built-in functions cost the product of their arguments' lengths: replace(), instr(), trim()
// (ltrim, rtrim) with a long character set, and LIKE/GLOB. One call such as
// replace(<16 MB>, <1 MB>||'b', 'x') ran for minutes in the host (issue "Limits at the edges" 2). These
// replacements give the same results as the built-ins of SQLite 3.40 (tests/bundle_db compares
// them on generated inputs) but look at the invocation's StopToken while they work, ending the call
// with SQLITE_INTERRUPT (the statement's error: Timeout) within about a millisecond of a limit. LIKE
// and GLOB match in time proportional to pattern times string (no exponential backtracking), and the
// pattern is also capped by SQLITE_LIMIT_LIKE_PATTERN_LENGTH. All are registered SQLITE_INNOCUOUS
// and SQLITE_DETERMINISTIC, as the built-ins are, so schemas using them keep working with
// trusted_schema off.
#pragma once

#include <sqlite3.h>

#include "bus/stop_token.h"

namespace skillbox::bundle_db {

/// What the functions of one connection read; must outlive the connection.
struct DbFunctionContext {
  const bus::StopToken* stop = nullptr;
};

/// Registers the replacements on `db`. False if SQLite refused one.
bool install_db_functions(sqlite3* db, DbFunctionContext& context);

}  // namespace skillbox::bundle_db
