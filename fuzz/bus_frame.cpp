// fuzz/bus_frame.cpp — the bus frame decoders (bus/codec.h), both directions.
//
// The first byte picks the decoder (even: request, odd: reply); the rest is the frame.
// Invariants: decoding never crashes or throws; a frame that decodes re-encodes to bytes that decode
// again, and re-encoding those gives the same bytes (encoding is deterministic and the decoder keeps
// everything the encoder writes); every decode error message is valid UTF-8.
//
// The seed corpus (fuzz/corpus/bus_frame/) holds one frame per alternative of bus::Request and
// bus::Reply, default-constructed. To write it again after the messages change:
//   SKILLBOX_FUZZ_WRITE_SEEDS=fuzz/corpus/bus_frame build-asan/fuzz/fuzz_bus_frame
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <span>
#include <string>
#include <utility>
#include <variant>

#include "base/utf8.h"
#include "bus/codec.h"
#include "fuzz/fuzz_check.h"

namespace {

template <typename Decode, typename Encode>
void round_trip(std::span<const uint8_t> frame, Decode decode, Encode encode) {
  auto decoded = decode(frame);
  if (!decoded) {
    FUZZ_CHECK(skillbox::base::utf8::is_valid(decoded.error().message));
    return;
  }
  auto bytes = encode(*decoded);
  auto again = decode(std::span<const uint8_t>(bytes.data(), bytes.size()));
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->id == decoded->id);
  FUZZ_CHECK(encode(*again) == bytes);
}

void write_seed(const std::string& dir, const std::string& name, uint8_t selector,
                const skillbox::bus::Bytes& frame) {
  std::ofstream out(dir + "/" + name, std::ios::binary | std::ios::trunc);
  out.put(static_cast<char>(selector));
  out.write(reinterpret_cast<const char*>(frame.data()), static_cast<std::streamsize>(frame.size()));
  FUZZ_CHECK(out.good());
}

template <typename Variant, typename Encode, size_t... I>
void write_seeds(const std::string& dir, const char* kind, uint8_t selector, Encode encode,
                 std::index_sequence<I...>) {
  (write_seed(dir, std::string(kind) + "-" + std::to_string(I), selector,
              encode(Variant(std::in_place_index<I>))),
   ...);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  namespace bus = skillbox::bus;
  const char* dir = std::getenv("SKILLBOX_FUZZ_WRITE_SEEDS");
  if (dir == nullptr) {
    return 0;
  }
  write_seeds<bus::Request>(
      dir, "request", 0, [](const bus::Request& r) { return bus::encode_request(7, r); },
      std::make_index_sequence<std::variant_size_v<bus::Request>>{});
  write_seeds<bus::Reply>(
      dir, "reply", 1, [](const bus::Reply& r) { return bus::encode_reply(7, r); },
      std::make_index_sequence<std::variant_size_v<bus::Reply>>{});
  std::exit(0);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace bus = skillbox::bus;
  if (size == 0) {
    return 0;
  }
  std::span<const uint8_t> frame(data + 1, size - 1);
  if (data[0] % 2 == 0) {
    round_trip(
        frame, [](std::span<const uint8_t> f) { return bus::decode_request(f); },
        [](const bus::RequestFrame& r) { return bus::encode_request(r.id, r.request); });
  } else {
    round_trip(
        frame, [](std::span<const uint8_t> f) { return bus::decode_reply(f); },
        [](const bus::ReplyFrame& r) { return bus::encode_reply(r.id, r.reply); });
  }
  return 0;
}
