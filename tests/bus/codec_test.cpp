#include "bus/codec.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace skillbox::bus {
namespace {

using json = nlohmann::json;
using namespace std::string_literals;

Bytes every_byte_value() {
  Bytes b(256);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(i);
  return b;
}

Bytes random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes b(n);
  for (auto& x : b) x = static_cast<uint8_t>(rng());
  return b;
}

// One or more samples of every Request alternative, with values that would expose a dropped,
// swapped or truncated field: NUL bytes, invalid UTF-8, every byte value, empty and large payloads,
// the extremes of every integer and the last value of every enum.
std::vector<Request> sample_requests() {
  return {
      LogRequest{LogLevel::error, "line one\nline \0two\xff"s},
      LogRequest{LogLevel::debug, ""},
      FsReadFileRequest{"dir/\xc3\xa4.txt", FsEncoding::binary},
      FsReadFileRequest{"notes.txt\0/../../../etc/passwd"s, FsEncoding::utf8},
      FsWriteFileRequest{"bin/all-bytes", every_byte_value(), true},
      FsWriteFileRequest{"empty", {}, false},
      FsWriteFileRequest{"large", random_bytes(3 * 1024 * 1024 + 7, 1), false},
      FsReaddirRequest{"."},
      FsStatRequest{"a/b/c"},
      FsExistsRequest{""},
      FsMkdirRequest{"x/y/z", true},
      FsRemoveRequest{"x", true},
      FsRenameRequest{"a.txt", "../a.txt"},
      HttpRequest{"POST",
                  "https://api.example.com/v1/?q=\x01",
                  {{"content-type", "application/json"}, {"x-nul", "a\0b"s}, {"", ""}},
                  every_byte_value(),
                  std::numeric_limits<uint64_t>::max(),
                  HttpResponseType::json},
      HttpRequest{"GET", "http://x/", {}, {}, std::nullopt, HttpResponseType::text},
      StoreGetRequest{"key\0with nul"s},
      StoreSetRequest{"k", R"({"a":[1,2,{"b":null}]})"},
      StoreDeleteRequest{"k"},
      StoreKeysRequest{""},
      StoreIncrementRequest{"counter", 1},
      StoreIncrementRequest{"k\0"s, -0.25},
      StoreCompareAndSetRequest{"k", std::nullopt, "[1]"},
      StoreCompareAndSetRequest{"k", R"({"a":1})", std::nullopt},
      StoreCompareAndSetRequest{"k", "", ""},
      EnvGetRequest{"WEATHER_API_KEY"},
      EventRequest{"notify", R"({"title":"t\u0000","body":""})"},
      DbRequest{DbOp::all, "SELECT * FROM t WHERE a = ?", "[1,\"x\",null]"},
      DbRequest{DbOp::exec, "", "[]"},
      CredentialRequest{CredentialKind::auth, true},
      CredentialRequest{CredentialKind::oauth, false},
      DbOpenRequest{},
      SourcesRequest{{"lib/a.js", "b.mjs"}},
      SourcesRequest{{}},
  };
}

std::vector<Reply> sample_replies() {
  return {
      ErrorReply{ErrorCode::IoError, "writeFile \"a\": host I/O error"},
      ErrorReply{ErrorCode::PermissionDenied, ""},
      OkReply{},
      BytesReply{every_byte_value()},
      BytesReply{{}},
      BytesReply{random_bytes(size_t{2} * 1024 * 1024, 2)},
      BoolReply{true},
      BoolReply{false},
      FsReaddirReply{
          {{"a", FsEntryType::file}, {"b\0c"s, FsEntryType::directory}, {"l1", FsEntryType::other}}},
      FsReaddirReply{{}},
      FsStatReply{FsEntryType::directory, uint64_t{1} << 40, 1700000000123.456},
      FsStatReply{FsEntryType::other, std::numeric_limits<uint64_t>::max(), 0.1},
      HttpResponseReply{599,
                        "Weird \0status"s,
                        {{"set-cookie", "a=b"}, {"set-cookie", "c=d"}},
                        every_byte_value(),
                        "https://example.com/final"},
      HttpResponseReply{std::numeric_limits<uint32_t>::max(), "", {}, {}, ""},
      OptionalStringReply{std::nullopt},
      OptionalStringReply{""},
      OptionalStringReply{"{\"v\":1}"},
      NumberReply{0},
      NumberReply{-2.5},
      NumberReply{9007199254740992.0},
      StringListReply{{"a", "", "b\0"s}},
      StringListReply{{}},
      SourcesReply{{{"a.js", "export {}"}, {"lib/b.js", ""}},
                   {{"c.js", "does not exist in the skill folder"}}},
      SourcesReply{},
  };
}

template <class Variant>
std::set<size_t> covered(const std::vector<Variant>& samples) {
  std::set<size_t> s;
  for (const auto& v : samples) s.insert(v.index());
  return s;
}

TEST(Codec, SamplesCoverEveryRequestAndReplyType) {
  EXPECT_EQ(covered(sample_requests()).size(), std::variant_size_v<Request>);
  EXPECT_EQ(covered(sample_replies()).size(), std::variant_size_v<Reply>);
}

TEST(Codec, EveryRequestRoundTrips) {
  const uint64_t ids[] = {0, 1, 127, 128, 65536, std::numeric_limits<uint64_t>::max()};
  size_t n = 0;
  for (const Request& request : sample_requests()) {
    const uint64_t id = ids[n++ % std::size(ids)];
    Bytes frame = encode_request(id, request);
    Result<RequestFrame> decoded = decode_request(frame);
    ASSERT_TRUE(decoded) << "index " << request.index() << ": " << decoded.error().message;
    EXPECT_EQ(decoded->id, id);
    EXPECT_EQ(decoded->request.index(), request.index());
    EXPECT_TRUE(decoded->request == request) << "index " << request.index();
  }
}

TEST(Codec, EveryReplyRoundTrips) {
  uint64_t id = 42;
  for (const Reply& reply : sample_replies()) {
    Bytes frame = encode_reply(id, reply);
    Result<ReplyFrame> decoded = decode_reply(frame);
    ASSERT_TRUE(decoded) << "index " << reply.index() << ": " << decoded.error().message;
    EXPECT_EQ(decoded->id, id);
    EXPECT_TRUE(decoded->reply == reply) << "index " << reply.index();
    id *= 3;
  }
}

TEST(Codec, EveryEnumValueRoundTrips) {
  for (uint8_t c = 0; c <= static_cast<uint8_t>(ErrorCode::IoError); ++c) {
    Reply reply = ErrorReply{static_cast<ErrorCode>(c), "m"};
    auto decoded = decode_reply(encode_reply(1, reply));
    ASSERT_TRUE(decoded);
    EXPECT_TRUE(decoded->reply == reply);
  }
  for (uint8_t l = 0; l <= static_cast<uint8_t>(LogLevel::error); ++l) {
    Request request = LogRequest{static_cast<LogLevel>(l), "x"};
    auto decoded = decode_request(encode_request(1, request));
    ASSERT_TRUE(decoded);
    EXPECT_TRUE(decoded->request == request);
  }
}

TEST(Codec, EncodingIsDeterministic) {
  for (const Request& request : sample_requests())
    EXPECT_EQ(encode_request(9, request), encode_request(9, request));
}

TEST(Codec, LargePayloadIsCarriedAsBinaryWithoutBloat) {
  const Bytes data = random_bytes(size_t{1024} * 1024, 3);
  Bytes frame = encode_reply(1, BytesReply{data});
  EXPECT_LT(frame.size(), data.size() + 32);  // bin 32 header + envelope, not base64 or an int array
}

// ---- malformed frames -------------------------------------------------------------------------------

// A frame built by hand from a json array (the layout of codec.h), for corruptions the encoder never
// produces.
Bytes raw(const json& frame) {
  return json::to_msgpack(frame);
}

json good_mkdir_frame() {
  return json::array({kFrameVersion, 0, 7, 6, json::array({"dir", true})});
}

void expect_request_error(const Bytes& frame, const std::string& fragment) {
  Result<RequestFrame> decoded = decode_request(frame);
  ASSERT_FALSE(decoded) << "decoded a frame that should fail with \"" << fragment << "\"";
  EXPECT_NE(decoded.error().message.find(fragment), std::string::npos) << decoded.error().message;
}

void expect_reply_error(const Bytes& frame, const std::string& fragment) {
  Result<ReplyFrame> decoded = decode_reply(frame);
  ASSERT_FALSE(decoded) << "decoded a frame that should fail with \"" << fragment << "\"";
  EXPECT_NE(decoded.error().message.find(fragment), std::string::npos) << decoded.error().message;
}

TEST(Codec, HandBuiltFrameMatchesTheDocumentedLayout) {
  // Guards the layout itself: if this decodes, codec.h's description is what the code does.
  Result<RequestFrame> decoded = decode_request(raw(good_mkdir_frame()));
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(decoded->id, 7u);
  EXPECT_TRUE(decoded->request == Request(FsMkdirRequest{"dir", true}));
  EXPECT_EQ(raw(good_mkdir_frame()), encode_request(7, FsMkdirRequest{"dir", true}));
}

TEST(Codec, EnvelopeErrorsAreReported) {
  expect_request_error({}, "empty");
  json f = good_mkdir_frame();
  f[0] = kFrameVersion + 1;
  expect_request_error(raw(f), "unsupported version");
  f = good_mkdir_frame();
  f[0] = "1";
  expect_request_error(raw(f), "unsupported version");
  f = good_mkdir_frame();
  f[1] = 1;
  expect_request_error(raw(f), "is not a request");
  f = good_mkdir_frame();
  f[2] = -1;
  expect_request_error(raw(f), "request id");
  f = good_mkdir_frame();
  f[3] = std::variant_size_v<Request>;
  expect_request_error(raw(f), "unknown tag " + std::to_string(std::variant_size_v<Request>));
  f[3] = std::numeric_limits<uint64_t>::max();
  expect_request_error(raw(f), "unknown tag");
  f = good_mkdir_frame();
  f.push_back(0);
  expect_request_error(raw(f), "array of 5");
  expect_request_error(raw(json::object({{"version", 1}})), "map");
  expect_request_error(raw(json("just a string")), "array of 5");
  // A reply is never a request and vice versa.
  expect_request_error(encode_reply(1, OkReply{}), "is not a request");
  expect_reply_error(encode_request(1, FsStatRequest{"x"}), "is not a reply");
  json r = json::array({kFrameVersion, 1, 1, std::variant_size_v<Reply>, json::array()});
  expect_reply_error(raw(r), "unknown tag " + std::to_string(std::variant_size_v<Reply>));
}

TEST(Codec, BodyFieldErrorsNameTheField) {
  auto with_body = [](json body) { return raw(json::array({kFrameVersion, 0, 7, 6, std::move(body)})); };
  expect_request_error(with_body(json::array({"dir"})),
                       "FsMkdirRequest: body: expected an array of 2 fields");
  expect_request_error(with_body(json::array({"dir", true, 1})), "array of 2 fields");
  expect_request_error(with_body(json::array({"dir", 1})), "field recursive: expected a bool, got integer 1");
  expect_request_error(with_body(json::array({json::binary({'d'}), true})), "field path: expected a string");
  expect_request_error(with_body(json::array({nullptr, true})), "field path: expected a string, got null");

  // Enum ranges: one past the last enumerator is refused.
  expect_request_error(raw(json::array({kFrameVersion, 0, 1, 1, json::array({"p", 2})})),
                       "field encoding: expected an enum value 0..1");
  expect_reply_error(raw(json::array({kFrameVersion, 1, 1, 0, json::array({10, "m"})})),
                     "field code: expected an enum value 0..9");
  expect_request_error(raw(json::array({kFrameVersion, 0, 1, 0, json::array({-1, "m"})})),
                       "field level: expected an enum value");
  // Integer range of a narrower field.
  json http = json::array({uint64_t{1} << 32, "", json::array(), json::binary(Bytes{}), ""});
  expect_reply_error(raw(json::array({kFrameVersion, 1, 1, 6, http})),
                     "field status: expected an unsigned integer");
  // Bytes must be plain bin, not a string or an ext type.
  json body = json::array({"p", "not bin", false});
  expect_request_error(raw(json::array({kFrameVersion, 0, 1, 2, body})), "field data: expected bytes");
  body[1] = json::binary({1, 2}, 5);
  expect_request_error(raw(json::array({kFrameVersion, 0, 1, 2, body})), "field data: expected bytes");
  // Nested fields: the path points into the list.
  json entries = json::array({json::array({"a", 0}), json::array({"b", 3})});
  expect_reply_error(raw(json::array({kFrameVersion, 1, 1, 4, json::array({entries})})),
                     "field entries[1].type: expected an enum value 0..2");
  json headers = json::array({json::array({"a", "b"}), json::array({"c"})});
  json request = json::array({"GET", "u", headers, json::binary(Bytes{}), nullptr, 0});
  expect_request_error(raw(json::array({kFrameVersion, 0, 1, 9, request})),
                       "field headers[1]: expected an array of 2");
  request[4] = "soon";
  request[2] = json::array();
  expect_request_error(raw(json::array({kFrameVersion, 0, 1, 9, request})),
                       "field timeout_ms: expected an unsigned");
}

TEST(Codec, NonFiniteFloatsAreRefused) {
  for (double bad : {std::nan(""), std::numeric_limits<double>::infinity()}) {
    json stat = json::array({0, 1, bad});
    expect_reply_error(raw(json::array({kFrameVersion, 1, 1, 5, stat})),
                       "field mtime_ms: expected a finite float");
  }
  json stat = json::array({0, 1, 5});  // an integer is not a float
  expect_reply_error(raw(json::array({kFrameVersion, 1, 1, 5, stat})), "field mtime_ms");
}

// A worker may ask for at most kMaxSourcesPerRequest files at once: a longer list is a bad frame, so
// the supervisor never walks a million names.
TEST(Codec, SourcesRequestWithTooManyNamesIsRefused) {
  SourcesRequest most;
  most.names.assign(kMaxSourcesPerRequest, "a.js");
  EXPECT_TRUE(decode_request(encode_request(1, most)));
  most.names.push_back("b.js");
  expect_request_error(encode_request(1, most), "more than the limit of 4096");
}

TEST(Codec, TrailingBytesAreRefused) {
  Bytes frame = encode_request(1, FsStatRequest{"x"});
  frame.push_back(0xc0);
  expect_request_error(frame, "expected end of input");
}

TEST(Codec, EveryTruncationIsACleanError) {
  std::vector<Bytes> frames = {
      encode_request(1, FsWriteFileRequest{"a/b", every_byte_value(), true}),
      encode_request(std::numeric_limits<uint64_t>::max(), sample_requests()[13]),  // HttpRequest
      encode_reply(3, FsReaddirReply{{{"x", FsEntryType::file}, {"y", FsEntryType::directory}}}),
      encode_reply(4, sample_replies()[12]),  // HttpResponseReply
      encode_reply(5, FsStatReply{FsEntryType::file, 12345, 1.5}),
  };
  for (const Bytes& frame : frames) {
    for (size_t len = 0; len < frame.size(); ++len) {
      std::span<const uint8_t> prefix(frame.data(), len);
      EXPECT_FALSE(decode_request(prefix)) << "prefix " << len << " of " << frame.size();
      EXPECT_FALSE(decode_reply(prefix)) << "prefix " << len << " of " << frame.size();
    }
  }
}

TEST(Codec, RandomByteFlipsNeverCrashAndAnythingAcceptedIsValid) {
  std::mt19937 rng(12345);
  std::vector<Bytes> frames;
  for (const Request& r : sample_requests()) {
    if (std::holds_alternative<FsWriteFileRequest>(r) && std::get<FsWriteFileRequest>(r).data.size() > 1000)
      continue;
    frames.push_back(encode_request(rng(), r));
  }
  const size_t n_requests = frames.size();
  for (const Reply& r : sample_replies()) {
    if (std::holds_alternative<BytesReply>(r) && std::get<BytesReply>(r).data.size() > 1000) continue;
    frames.push_back(encode_reply(rng(), r));
  }
  size_t refused = 0;
  size_t accepted = 0;
  for (const Bytes& original : frames) {
    for (int round = 0; round < 300; ++round) {
      Bytes frame = original;
      const int flips = 1 + static_cast<int>(rng() % 3);
      for (int i = 0; i < flips; ++i) frame[rng() % frame.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
      auto req = decode_request(frame);
      auto rep = decode_reply(frame);
      const bool was_request = &original < &frames[n_requests];
      (was_request ? req.ok() : rep.ok()) ? ++accepted : ++refused;
      // Whatever decodes is a well-formed value: it encodes again and decodes to itself.
      if (req) {
        auto again = decode_request(encode_request(req->id, req->request));
        ASSERT_TRUE(again);
        EXPECT_TRUE(again->request == req->request);
      }
      if (rep) {
        auto again = decode_reply(encode_reply(rep->id, rep->reply));
        ASSERT_TRUE(again);
        EXPECT_TRUE(again->reply == rep->reply);
      }
    }
  }
  // Both happen: a flip inside a string's bytes legitimately decodes, most others are caught.
  EXPECT_GT(refused, 0u);
  EXPECT_GT(accepted, 0u);
}

TEST(Codec, DeepNestingIsRefusedWithoutRecursingIntoIt) {
  // A million nested one-element arrays (0x91) would overflow a recursive parser's native stack.
  Bytes frame(1'000'000, 0x91);
  frame.push_back(0xc0);
  expect_request_error(frame, "nesting deeper than 8");
  expect_reply_error(frame, "nesting deeper than 8");
  // The same inside an otherwise valid frame.
  json nested = "x";
  for (int i = 0; i < 10; ++i) nested = json::array({nested});
  expect_request_error(raw(json::array({kFrameVersion, 0, 1, 8, json::array({nested})})), "nesting deeper");
}

TEST(Codec, HugeDeclaredLengthsFailWithoutAllocating) {
  // array32 / bin32 / str32 headers claiming 4 GiB with only a few bytes following.
  for (uint8_t header : {uint8_t{0xdd}, uint8_t{0xc6}, uint8_t{0xdb}, uint8_t{0xdf}}) {
    Bytes frame = {header, 0xff, 0xff, 0xff, 0xff, 0x01, 0x02};
    EXPECT_FALSE(decode_request(frame));
    EXPECT_FALSE(decode_reply(frame));
  }
}

TEST(Codec, FramesAboveTheSizeLimitAreRefusedBeforeParsing) {
  // Reserve address space only: the decoder must refuse by size without touching a byte.
  const size_t size = kMaxFrameBytes + 1;
  void* p = mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  std::span<const uint8_t> frame(static_cast<const uint8_t*>(p), size);
  expect_request_error(Bytes{}, "empty");
  Result<RequestFrame> decoded = decode_request(frame);
  ASSERT_FALSE(decoded);
  EXPECT_NE(decoded.error().message.find("larger than the limit"), std::string::npos);
  munmap(p, size);
}

TEST(Codec, ADecoderStaysUsableAfterErrors) {
  (void)decode_request(Bytes(1000, 0x91));
  (void)decode_reply(Bytes{0xc1});  // 0xc1 is never used in MessagePack
  Request request = FsRenameRequest{"a", "b"};
  auto decoded = decode_request(encode_request(5, request));
  ASSERT_TRUE(decoded);
  EXPECT_TRUE(decoded->request == request);
}

}  // namespace
}  // namespace skillbox::bus
