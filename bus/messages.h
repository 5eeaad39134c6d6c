// bus/messages.h — the typed requests a skill can make of the host, and their replies.
//
// Bindings turn JS arguments into one of these requests; capabilities turn a request into a reply.
// Every type here is a plain value: strings, integers, byte vectors, enums and nested structs of those.
// No pointers, no references, no JSValue, nothing that refers to host state. That is what lets the same
// request cross a socket to a worker process later (bus/codec.h encodes every type to a frame).
//
// Paths, keys, names and URLs are carried exactly as the skill gave them (already checked to be
// strings); capabilities validate them, since only they know the rules.
// Equality is defaulted (member-wise) so tests can compare a value with its decoded frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "bus/memory_budget.h"

namespace skillbox::bus {

using Bytes = std::vector<uint8_t>;

/// Stable error names and codes seen by skills (docs/architecture.md "Contracts").
enum class ErrorCode : uint8_t {
  PermissionDenied,  // EACCES: the manifest does not grant this, or the target is outside the skill's reach
  NotFound,          // ENOENT
  QuotaExceeded,     // EQUOTA: a workspace/store quota would be exceeded; nothing was changed
  InvalidArgument,   // EINVAL: malformed path, key, URL, header, ...
  PayloadTooLarge,   // E2BIG: a size cap (request/response body, file size, value size)
  Timeout,           // ETIMEDOUT
  NetworkError,      // ENET: connection, TLS, protocol failures
  AlreadyExists,     // EEXIST: mkdir/rename target exists where it must not
  NotEmpty,          // ENOTEMPTY: non-recursive remove of a non-empty directory
  IoError,           // EIO: the host failed unexpectedly; the message says what
};

// ---- log ------------------------------------------------------------------------------------------

enum class LogLevel : uint8_t { debug, info, warn, error };

/// One formatted message from `log`/`console.*`. The binding formats the JS values (bounded, under the
/// step limit); the log capability applies the per-message cap, escaping and the per-run budget.
/// Reply: OkReply when recorded; ErrorReply{QuotaExceeded} once the run's log budget is used up (this
/// and every later message are dropped; the binding stops formatting and never throws it to the skill).
struct LogRequest {
  LogLevel level = LogLevel::info;
  std::string text;

  bool operator==(const LogRequest&) const = default;
};

// ---- fs (openhuman.fs) ----------------------------------------------------------------------------

enum class FsEncoding : uint8_t { utf8, binary };
enum class FsEntryType : uint8_t { file, directory, other };

struct FsReadFileRequest {
  std::string path;
  FsEncoding encoding = FsEncoding::utf8;

  bool operator==(const FsReadFileRequest&) const = default;
};
struct FsWriteFileRequest {
  std::string path;
  Bytes data;
  bool append = false;  // appendFile

  bool operator==(const FsWriteFileRequest&) const = default;
};
struct FsReaddirRequest {
  std::string path;

  bool operator==(const FsReaddirRequest&) const = default;
};
struct FsStatRequest {
  std::string path;

  bool operator==(const FsStatRequest&) const = default;
};
struct FsExistsRequest {
  std::string path;

  bool operator==(const FsExistsRequest&) const = default;
};
struct FsMkdirRequest {
  std::string path;
  bool recursive = false;

  bool operator==(const FsMkdirRequest&) const = default;
};
struct FsRemoveRequest {
  std::string path;
  bool recursive = false;

  bool operator==(const FsRemoveRequest&) const = default;
};
struct FsRenameRequest {
  std::string from;
  std::string to;

  bool operator==(const FsRenameRequest&) const = default;
};

// ---- http (openhuman.http) ------------------------------------------------------------------------

enum class HttpResponseType : uint8_t { text, binary, json };

struct HttpRequest {
  std::string method = "GET";
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  Bytes body;
  std::optional<uint64_t> timeout_ms;  // lowered to the policy's timeout, never raised
  HttpResponseType response_type = HttpResponseType::text;

  bool operator==(const HttpRequest&) const = default;
};

// ---- store ----------------------------------------------------------------------------------------

struct StoreGetRequest {
  std::string key;

  bool operator==(const StoreGetRequest&) const = default;
};
struct StoreSetRequest {
  std::string key;
  std::string value_json;  // JSON text produced by the binding (JSON.stringify semantics)

  bool operator==(const StoreSetRequest&) const = default;
};
struct StoreDeleteRequest {
  std::string key;

  bool operator==(const StoreDeleteRequest&) const = default;
};
struct StoreKeysRequest {
  std::string prefix;

  bool operator==(const StoreKeysRequest&) const = default;
};
/// `store.increment(key, delta)`: adds `delta` (finite) to the number stored under `key` (0 when the key
/// does not exist) in one transaction. Reply: NumberReply with the new value, or an ErrorReply.
struct StoreIncrementRequest {
  std::string key;
  double delta = 1;

  bool operator==(const StoreIncrementRequest&) const = default;
};
/// `store.compareAndSet(key, expected, value)`: in one transaction, when the stored value equals
/// `expected_json` as a JSON value (nullopt: the key must not exist), stores `value_json` (nullopt:
/// deletes the key). Both are JSON text produced by the binding. Reply: BoolReply (whether it wrote).
struct StoreCompareAndSetRequest {
  std::string key;
  std::optional<std::string> expected_json;
  std::optional<std::string> value_json;

  bool operator==(const StoreCompareAndSetRequest&) const = default;
};

// ---- env ------------------------------------------------------------------------------------------

struct EnvGetRequest {
  std::string name;

  bool operator==(const EnvGetRequest&) const = default;
};

// ---- OpenHuman bundles (compat/, docs/openhuman.md) ------------------------------------------------

/// An event of the run (platform.notify, memory.insert, oauth.revoke, cron registrations): recorded
/// in RunResult::events. `data_json` is JSON text made by the binding. Reply: OkReply, or
/// ErrorReply{QuotaExceeded} once the run's event budget is used up.
struct EventRequest {
  std::string type;
  std::string data_json;

  bool operator==(const EventRequest&) const = default;
};

enum class DbOp : uint8_t {
  exec,  // reply: the number of rows changed
  get,   // reply: the first row as an object, or null
  all,   // reply: every row, an array of objects
};

/// One SQL statement on the skill's own database (`db.exec/get/all`). `params_json` is a JSON array of
/// null, booleans, numbers and strings bound to `?` in order ("[]" for none). Reply:
/// OptionalStringReply with the result as JSON text (see DbOp), or an ErrorReply.
struct DbRequest {
  DbOp op = DbOp::exec;
  std::string sql;
  std::string params_json = "[]";

  bool operator==(const DbRequest&) const = default;
};

/// Worker mode only: the worker asks its supervisor for the skill's database, once, before it serves
/// the bundle's first DbRequest itself (docs/openhuman.md "db"). The supervisor takes the skill's
/// database lease (waiting at most until the deadline) and answers BytesReply with the database file's
/// bytes (empty: no database yet), or ErrorReply: Timeout (another invocation of the skill holds the
/// lease past this one's deadline), PayloadTooLarge (the file does not fit the run's memory),
/// PermissionDenied (not a bundle, or asked twice), IoError. In-process nobody sends it.
struct DbOpenRequest {
  bool operator==(const DbOpenRequest&) const = default;
};

enum class CredentialKind : uint8_t { oauth, auth };

/// `oauth.getCredential()` / `auth.getCredential()` / `oauth.revoke()`. Reply: OptionalStringReply with
/// the credential as JSON text in which every secret is an opaque per-invocation placeholder (null:
/// none); for `revoke`, OkReply after the credential is forgotten for the rest of the invocation.
struct CredentialRequest {
  CredentialKind kind = CredentialKind::oauth;
  bool revoke = false;

  bool operator==(const CredentialRequest&) const = default;
};

// ---- the skill's sources (worker mode) --------------------------------------------------------------

/// Most names one SourcesRequest may carry: the most files a module graph may hold
/// (runner::kMaxSourceFiles). A longer request does not decode (the worker broke the protocol).
inline constexpr size_t kMaxSourcesPerRequest = 4096;

/// Worker mode only: the worker walks the entry's module graph itself (engine/module_graph.h: parsing
/// is skill code's business and stays behind the second wall) and asks its supervisor for the files
/// it does not have yet. `names` are skill-relative names in normal form, each a module source name
/// (engine::is_module_source_name), each asked once per invocation. The supervisor treats them as
/// hostile input: a name that is not in normal form (absolute, "..", empty or "." components, NUL),
/// not a module source name, asked before or the entry itself ends the worker as a protocol violation.
/// It reads the others exactly as the in-process host does (openat2 beneath the skill folder, the
/// caps on files, bytes and depth, runner/skill_reader.h) and answers SourcesReply, or ErrorReply
/// {InvalidArgument} with the message of the cap that was exceeded (the run is then `invalid`; every
/// later SourcesRequest gets the same answer). In-process nobody sends it: the host refuses it.
struct SourcesRequest {
  std::vector<std::string> names;

  bool operator==(const SourcesRequest&) const = default;
};

using Request =
    std::variant<LogRequest, FsReadFileRequest, FsWriteFileRequest, FsReaddirRequest, FsStatRequest,
                 FsExistsRequest, FsMkdirRequest, FsRemoveRequest, FsRenameRequest, HttpRequest,
                 StoreGetRequest, StoreSetRequest, StoreDeleteRequest, StoreKeysRequest,
                 StoreIncrementRequest, StoreCompareAndSetRequest, EnvGetRequest, EventRequest, DbRequest,
                 CredentialRequest, DbOpenRequest, SourcesRequest>;

// ---- replies --------------------------------------------------------------------------------------

/// A refusal or failure. `message` is shown to the skill; it never contains a host path.
struct ErrorReply {
  ErrorCode code = ErrorCode::IoError;
  std::string message;

  bool operator==(const ErrorReply&) const = default;
};
/// Success with nothing to return (log, writeFile, mkdir, remove, rename, store.set).
struct OkReply {
  bool operator==(const OkReply&) const = default;
};
/// readFile. `held` counts `data` against the invocation's memory budget (bus/memory_budget.h) for
/// as long as the reply exists: waiting in the inbox and while the binding turns it into a JS value.
struct BytesReply {
  BytesReply(Bytes d = {}, HostBytes h = {}) : data(std::move(d)), held(std::move(h)) {}  // NOLINT
  Bytes data;
  HostBytes held;  // not on the wire; equal to every other

  bool operator==(const BytesReply&) const = default;
};
/// exists, store.delete (whether the key existed), store.compareAndSet (whether it wrote).
struct BoolReply {
  bool value = false;

  bool operator==(const BoolReply&) const = default;
};
struct FsDirEntry {
  std::string name;
  FsEntryType type = FsEntryType::file;

  bool operator==(const FsDirEntry&) const = default;
};
/// readdir, sorted by name.
struct FsReaddirReply {
  std::vector<FsDirEntry> entries;

  bool operator==(const FsReaddirReply&) const = default;
};
struct FsStatReply {
  FsEntryType type = FsEntryType::file;
  uint64_t size = 0;
  double mtime_ms = 0;  // milliseconds since the Unix epoch

  bool operator==(const FsStatReply&) const = default;
};
/// `held` counts the headers and the body against the invocation's memory budget while the reply exists.
struct HttpResponseReply {
  HttpResponseReply(uint32_t s = 0, std::string st = {},  // NOLINT(google-explicit-constructor)
                    std::vector<std::pair<std::string, std::string>> h = {}, Bytes b = {}, std::string u = {})
      : status(s), status_text(std::move(st)), headers(std::move(h)), body(std::move(b)), url(std::move(u)) {}
  uint32_t status = 0;
  std::string status_text;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased, in arrival order
  Bytes body;                                                // decoded body
  std::string url;                                           // final URL after redirects
  HostBytes held;                                            // not on the wire; equal to every other

  bool operator==(const HttpResponseReply&) const = default;
};
/// store.get (nullopt: no such key), env.get (nullopt: not granted or not set). `held` counts a store
/// value against the invocation's memory budget while the reply exists.
struct OptionalStringReply {
  OptionalStringReply(std::optional<std::string> v = std::nullopt,  // NOLINT(google-explicit-constructor)
                      HostBytes h = {})
      : value(std::move(v)), held(std::move(h)) {}
  std::optional<std::string> value;
  HostBytes held;  // not on the wire; equal to every other

  bool operator==(const OptionalStringReply&) const = default;
};
/// store.increment: the value after the addition (finite).
struct NumberReply {
  double value = 0;

  bool operator==(const NumberReply&) const = default;
};
/// store.keys, sorted.
struct StringListReply {
  std::vector<std::string> values;

  bool operator==(const StringListReply&) const = default;
};

/// SourcesRequest: what the supervisor read, as bus::SkillSources holds it. Each asked name is in
/// `files` (its text) or `refused` (why it cannot be loaded), or a folder above it is in `refused`.
struct SourcesReply {
  std::map<std::string, std::string> files;
  std::map<std::string, std::string> refused;

  bool operator==(const SourcesReply&) const = default;
};

using Reply =
    std::variant<ErrorReply, OkReply, BytesReply, BoolReply, FsReaddirReply, FsStatReply, HttpResponseReply,
                 OptionalStringReply, NumberReply, StringListReply, SourcesReply>;

/// Name ("PermissionDenied") and code ("EACCES") of an ErrorCode, as skills see them.
const char* error_name(ErrorCode code);
const char* error_errno(ErrorCode code);
/// Whether `code` is the error_errno() of some ErrorCode: the only codes a run's error may carry.
bool is_error_errno(std::string_view code);

}  // namespace skillbox::bus
