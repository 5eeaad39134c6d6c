// bus/messages.h — the typed requests a skill can make of the host, and their replies.
//
// Bindings turn JS arguments into one of these requests; capabilities turn a request into a reply.
// Every type here is a plain value: strings, integers, byte vectors, enums and nested structs of those.
// No pointers, no references, no JSValue, nothing that refers to host state. That is what lets the same
// request cross a socket to a worker process later (bus/codec.h encodes every type to a frame).
//
// Paths, keys, names and URLs are carried exactly as the skill gave them (already checked to be
// strings); capabilities validate them, since only they know the rules.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace skillbox::bus {

using Bytes = std::vector<uint8_t>;

/// Stable error names and codes seen by skills (DESIGN.md "Host failures").
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
};

// ---- fs (openhuman.fs) ----------------------------------------------------------------------------

enum class FsEncoding : uint8_t { utf8, binary };
enum class FsEntryType : uint8_t { file, directory, other };

struct FsReadFileRequest {
  std::string path;
  FsEncoding encoding = FsEncoding::utf8;
};
struct FsWriteFileRequest {
  std::string path;
  Bytes data;
  bool append = false;  // appendFile
};
struct FsReaddirRequest {
  std::string path;
};
struct FsStatRequest {
  std::string path;
};
struct FsExistsRequest {
  std::string path;
};
struct FsMkdirRequest {
  std::string path;
  bool recursive = false;
};
struct FsRemoveRequest {
  std::string path;
  bool recursive = false;
};
struct FsRenameRequest {
  std::string from;
  std::string to;
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
};

// ---- store ----------------------------------------------------------------------------------------

struct StoreGetRequest {
  std::string key;
};
struct StoreSetRequest {
  std::string key;
  std::string value_json;  // JSON text produced by the binding (JSON.stringify semantics)
};
struct StoreDeleteRequest {
  std::string key;
};
struct StoreKeysRequest {
  std::string prefix;
};

// ---- env ------------------------------------------------------------------------------------------

struct EnvGetRequest {
  std::string name;
};

using Request =
    std::variant<LogRequest, FsReadFileRequest, FsWriteFileRequest, FsReaddirRequest, FsStatRequest,
                 FsExistsRequest, FsMkdirRequest, FsRemoveRequest, FsRenameRequest, HttpRequest,
                 StoreGetRequest, StoreSetRequest, StoreDeleteRequest, StoreKeysRequest, EnvGetRequest>;

// ---- replies --------------------------------------------------------------------------------------

/// A refusal or failure. `message` is shown to the skill; it never contains a host path.
struct ErrorReply {
  ErrorCode code = ErrorCode::IoError;
  std::string message;
};
/// Success with nothing to return (log, writeFile, mkdir, remove, rename, store.set).
struct OkReply {};
/// readFile.
struct BytesReply {
  Bytes data;
};
/// exists, store.delete (whether the key existed).
struct BoolReply {
  bool value = false;
};
struct FsDirEntry {
  std::string name;
  FsEntryType type = FsEntryType::file;
};
/// readdir, sorted by name.
struct FsReaddirReply {
  std::vector<FsDirEntry> entries;
};
struct FsStatReply {
  FsEntryType type = FsEntryType::file;
  uint64_t size = 0;
  double mtime_ms = 0;  // milliseconds since the Unix epoch
};
struct HttpResponseReply {
  uint32_t status = 0;
  std::string status_text;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased, in arrival order
  Bytes body;                                                // decoded body
  std::string url;                                           // final URL after redirects
};
/// store.get (nullopt: no such key), env.get (nullopt: not granted or not set).
struct OptionalStringReply {
  std::optional<std::string> value;
};
/// store.keys, sorted.
struct StringListReply {
  std::vector<std::string> values;
};

using Reply = std::variant<ErrorReply, OkReply, BytesReply, BoolReply, FsReaddirReply, FsStatReply,
                           HttpResponseReply, OptionalStringReply, StringListReply>;

/// Name ("PermissionDenied") and code ("EACCES") of an ErrorCode, as skills see them.
const char* error_name(ErrorCode code);
const char* error_errno(ErrorCode code);

}  // namespace skillbox::bus
