// fuzz/bus_frame.cpp — the bus frame decoders (bus/codec.h, bus/worker_frames.h), every direction.
//
// The first byte picks the decoder, modulo 4: 0 request (codec.h), 1 reply (codec.h), 2 what a worker
// sends its supervisor (decode_from_worker: the supervisor's side, where every frame is hostile),
// 3 what a supervisor sends a worker (decode_to_worker); the rest is the frame.
// Invariants: decoding never crashes or throws; a frame that decodes re-encodes to bytes that decode
// again, and re-encoding those gives the same bytes (encoding is deterministic and the decoder keeps
// everything the encoder writes); every decode error message is valid UTF-8.
//
// The seed corpus (fuzz/corpus/bus_frame/) holds one frame per alternative of bus::Request, bus::Reply,
// bus::FromWorker and bus::ToWorker, default-constructed. To write it again after the messages change:
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
#include "bus/worker_frames.h"
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
  FUZZ_CHECK(encode(*again) == bytes);
}

skillbox::bus::Bytes encode_from_worker(const skillbox::bus::FromWorker& frame) {
  namespace bus = skillbox::bus;
  if (const auto* r = std::get_if<bus::RequestFrame>(&frame)) return bus::encode_request(r->id, r->request);
  if (const auto* p = std::get_if<bus::ProgressFrame>(&frame)) return bus::encode_progress(*p);
  return bus::encode_result(std::get<bus::ResultFrame>(frame));
}

skillbox::bus::Bytes encode_to_worker(const skillbox::bus::ToWorker& frame) {
  namespace bus = skillbox::bus;
  if (const auto* r = std::get_if<bus::ReplyFrame>(&frame)) return bus::encode_reply(r->id, r->reply);
  return bus::encode_invocation(std::get<bus::InvocationFrame>(frame));
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
  write_seed(dir, "from-worker-progress", 2, bus::encode_progress(bus::ProgressFrame{}));
  write_seed(dir, "from-worker-result", 2, bus::encode_result(bus::ResultFrame{}));
  write_seed(dir, "to-worker-invocation", 3, bus::encode_invocation(bus::InvocationFrame{}));
  std::exit(0);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace bus = skillbox::bus;
  if (size == 0) {
    return 0;
  }
  std::span<const uint8_t> frame(data + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      round_trip(
          frame, [](std::span<const uint8_t> f) { return bus::decode_request(f); },
          [](const bus::RequestFrame& r) { return bus::encode_request(r.id, r.request); });
      break;
    case 1:
      round_trip(
          frame, [](std::span<const uint8_t> f) { return bus::decode_reply(f); },
          [](const bus::ReplyFrame& r) { return bus::encode_reply(r.id, r.reply); });
      break;
    case 2:
      round_trip(
          frame, [](std::span<const uint8_t> f) { return bus::decode_from_worker(f); }, encode_from_worker);
      break;
    default:
      round_trip(
          frame, [](std::span<const uint8_t> f) { return bus::decode_to_worker(f); }, encode_to_worker);
      break;
  }
  return 0;
}
