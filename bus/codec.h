// bus/codec.h — every bus::Request and bus::Reply as a self-contained byte frame, and back.
//
// The worker transport (a later issue) carries these frames over a socketpair between the supervisor
// and a sandboxed worker process. A frame from the other side is untrusted: a compromised worker may
// send anything. Decoding therefore validates every byte and never throws, never recurses without
// bound and never allocates more than the frame's own size suggests: a malformed, truncated or
// hostile frame is an ordinary Error.
//
// Frame layout (MessagePack, https://github.com/msgpack/msgpack/blob/master/spec.md, encoded and
// parsed with nlohmann/json):
//
//   [version, kind, id, tag, body]
//     version  uint  kFrameVersion; any other value is refused
//     kind     uint  0 = request, 1 = reply (a reply frame never decodes as a request)
//     id       uint  the request id (64-bit) the reply answers
//     tag      uint  index of the alternative in bus::Request / bus::Reply
//     body     array the alternative's fields in declaration order (codec.cpp lists them)
//
// Field encodings: std::string -> str (bytes carried as-is, NUL and invalid UTF-8 included; the
// capability validates), Bytes -> bin, bool -> bool, unsigned integers and enums -> uint (range
// checked on decode: an enum value beyond its last enumerator is refused), double -> float (finite),
// std::optional -> nil or the value, vectors and pairs -> arrays, nested structs -> arrays of fields.
// No MessagePack maps, ext types or negative integers ever appear in a valid frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "bus/messages.h"
#include "skillbox/skillbox.h"

namespace skillbox::bus {

/// Version of the frame layout. Bump it whenever a message struct gains, loses or reorders a field,
/// an enum gains a value, or an alternative is added to or moved within Request/Reply.
inline constexpr uint64_t kFrameVersion = 6;

/// Largest frame decode accepts. Above every payload cap the host grants by default (10 MiB http
/// response bodies and workspace files) with room for raised manifest limits, and small enough that
/// a hostile length cannot make the supervisor allocate without bound.
inline constexpr size_t kMaxFrameBytes = 256ull * 1024 * 1024;

/// Deepest MessagePack nesting decode accepts. A valid frame nests at most 4 deep (frame, body,
/// FsReaddirReply::entries, one entry); the bound stops a frame of a million nested arrays from
/// overflowing the parser's native stack (nlohmann/json parses MessagePack recursively).
inline constexpr size_t kMaxFrameDepth = 8;

struct RequestFrame {
  uint64_t id = 0;
  Request request;
};

struct ReplyFrame {
  uint64_t id = 0;
  Reply reply;
};

/// Encodes `request` with request id `id`. Deterministic: equal inputs give equal bytes.
/// Throws only std::bad_alloc.
[[nodiscard]] Bytes encode_request(uint64_t id, const Request& request);

/// Encodes `reply` answering request `id`. Deterministic. Throws only std::bad_alloc.
[[nodiscard]] Bytes encode_reply(uint64_t id, const Reply& reply);

/// Decodes one complete request frame. Every deviation from the layout above is an Error whose
/// message says what was wrong and where ("request FsMkdirRequest: field recursive: expected a
/// bool, got number"): wrong version or kind, unknown tag, wrong field count or type, enum or
/// integer out of range, non-finite float, nesting deeper than kMaxFrameDepth, a frame larger than
/// kMaxFrameBytes, truncation, or bytes after the end of the frame. Never throws.
[[nodiscard]] Result<RequestFrame> decode_request(std::span<const uint8_t> frame) noexcept;

/// Decodes one complete reply frame. Same rules as decode_request. Never throws.
[[nodiscard]] Result<ReplyFrame> decode_reply(std::span<const uint8_t> frame) noexcept;

}  // namespace skillbox::bus
