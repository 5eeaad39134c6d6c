// bindings/text_codec.cpp — TextEncoder and TextDecoder (WHATWG Encoding Standard, UTF-8 only).
#include "bindings/text_codec.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <iterator>
#include <new>
#include <string>

#include "base/quote.h"
#include "base/utf8.h"
#include "base/utf8_decoder.h"
#include "bindings/args.h"
#include "bindings/context_state.h"
#include "bindings/errors.h"
#include "bindings/function_list.h"
#include "bindings/host_class.h"
#include "bindings/js_classes.h"
#include "bindings/owners.h"
#include "bindings/values.h"

namespace skillbox::bindings {
namespace {

// ---- TextEncoder ----------------------------------------------------------------------------------

JSClassID encoder_class_id() {
  static const JSClassID id = new_class_id();
  return id;
}

// A TextEncoder has no state; its opaque only marks the object as one (JS_GetOpaque needs non-null).
char encoder_brand;

const JSClassDef kEncoderClass = {.class_name = "TextEncoder",
                                  .finalizer = nullptr,
                                  .gc_mark = nullptr,
                                  .call = nullptr,
                                  .exotic = nullptr};

bool is_encoder(JSContext* ctx, JSValueConst this_val, const char* member) {
  if (JS_GetOpaque(this_val, encoder_class_id()) != nullptr) return true;
  throw_illegal_invocation(ctx, "TextEncoder", member);
  return false;
}

// The argument of encode()/encodeInto(): a USVString, `undefined` read as "" where allowed.
bool encoder_input(JSContext* ctx, JSValueConst value, const Where& where, StringBytes& out) {
  return string_bytes(ctx, value, where, out,
                      {.lone_surrogates = LoneSurrogates::replace, .coerce_primitives = true});
}

JSValue js_encoder_ctor(JSContext* ctx, JSValueConst new_target, int /*argc*/, JSValueConst* /*argv*/) {
  Value obj(ctx, new_instance(ctx, new_target, encoder_class_id(), "TextEncoder"));
  if (!obj.is_exception()) JS_SetOpaque(obj.get(), &encoder_brand);
  return obj.release();
}

JSValue js_encoder_encoding(JSContext* ctx, JSValueConst this_val) {
  if (!is_encoder(ctx, this_val, "encoding")) return JS_EXCEPTION;
  return JS_NewString(ctx, "utf-8");
}

JSValue js_encoder_encode(JSContext* ctx, JSValueConst this_val, int argc, JSValueConst* argv) {
  if (!is_encoder(ctx, this_val, "encode")) return JS_EXCEPTION;
  const Args args(ctx, "TextEncoder.encode", argc, argv);
  if (!args.present(0)) return new_uint8_array(ctx, nullptr, 0);
  StringBytes input;
  if (!encoder_input(ctx, args[0], args.where("input"), input)) return JS_EXCEPTION;
  return new_uint8_array(ctx, reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

JSValue js_encoder_encode_into(JSContext* ctx, JSValueConst this_val, int argc, JSValueConst* argv) {
  if (!is_encoder(ctx, this_val, "encodeInto")) return JS_EXCEPTION;
  const Args args(ctx, "TextEncoder.encodeInto", argc, argv);
  if (!args.require(2)) return JS_EXCEPTION;
  StringBytes source;
  if (!encoder_input(ctx, args[0], args.where("source"), source)) return JS_EXCEPTION;
  if (!js_class::has_class(args[1], js_class::kUint8Array))
    return throw_wrong_type(ctx, args.where("destination"), "a Uint8Array", args[1]);
  ByteView destination;  // no JS runs from here until the copy is done
  if (!to_buffer_source(ctx, args[1], args.where("destination"), destination)) return JS_EXCEPTION;

  // Whole characters only (Encoding §7.2.3 encodeInto): stop before one that does not fit.
  const std::string_view text = source.view();
  // Engine invariant (QuickJS 2021-03-27): these bytes are the ArrayBuffer's own storage, which
  // JS_GetArrayBuffer hands out as a writable uint8_t* (ByteView is const only because most callers
  // read). This engine has no read-only buffers (a typed array with elements cannot be frozen); a
  // detached buffer gives size 0, so nothing is written. Pinned by
  // TextCodec.EncodeIntoWritesTheCallersBuffer.
  auto* out = const_cast<uint8_t*>(destination.data);
  size_t pos = 0;
  size_t written = 0;
  uint64_t read = 0;
  while (pos < text.size()) {
    const size_t len = base::utf8::sequence_length(static_cast<uint8_t>(text[pos]));
    if (written + len > destination.size) break;
    std::memcpy(out + written, text.data() + pos, len);
    written += len;
    pos += len;
    read += len == 4 ? 2 : 1;  // a 4-byte character was a surrogate pair in the JS string
  }
  Value result(ctx, JS_NewObject(ctx));
  if (result.is_exception()) return JS_EXCEPTION;
  if (JS_DefinePropertyValueStr(ctx, result.get(), "read", JS_NewInt64(ctx, static_cast<int64_t>(read)),
                                JS_PROP_C_W_E) < 0 ||
      JS_DefinePropertyValueStr(ctx, result.get(), "written", JS_NewInt64(ctx, static_cast<int64_t>(written)),
                                JS_PROP_C_W_E) < 0)
    return JS_EXCEPTION;
  return result.release();
}

const JSCFunctionListEntry kEncoderProto[] = {
    list_getter("encoding", js_encoder_encoding),
    list_function("encode", 0, js_encoder_encode),
    list_function("encodeInto", 2, js_encoder_encode_into),
    list_string("[Symbol.toStringTag]", "TextEncoder"),
};

// ---- TextDecoder ----------------------------------------------------------------------------------

struct DecoderState {
  DecoderState(bool fatal_flag, bool ignore_bom_flag)
      : decoder(fatal_flag, ignore_bom_flag), fatal(fatal_flag), ignore_bom(ignore_bom_flag) {}
  base::utf8::Utf8Decoder decoder;
  bool fatal;
  bool ignore_bom;
  bool do_not_flush = false;  // the last decode() had {stream: true}
};

JSClassID decoder_class_id() {
  static const JSClassID id = new_class_id();
  return id;
}

void decoder_finalizer(JSRuntime* rt, JSValue obj) {
  auto* state = static_cast<DecoderState*>(JS_GetOpaque(obj, decoder_class_id()));
  if (state == nullptr) return;
  state->~DecoderState();
  js_free_rt(rt, state);
}

const JSClassDef kDecoderClass = {.class_name = "TextDecoder",
                                  .finalizer = decoder_finalizer,
                                  .gc_mark = nullptr,
                                  .call = nullptr,
                                  .exotic = nullptr};

DecoderState* decoder_of(JSContext* ctx, JSValueConst this_val, const char* member) {
  auto* state = static_cast<DecoderState*>(JS_GetOpaque(this_val, decoder_class_id()));
  if (state == nullptr) throw_illegal_invocation(ctx, "TextDecoder", member);
  return state;
}

// Encoding Standard §4.2 "get an encoding": strip ASCII whitespace, compare ASCII case-insensitively
// with the labels of UTF-8 (the only encoding here).
bool is_utf8_label(std::string_view label) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'; };
  while (!label.empty() && space(label.front())) label.remove_prefix(1);
  while (!label.empty() && space(label.back())) label.remove_suffix(1);
  std::string lower(label);
  for (char& c : lower)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  static constexpr std::array<std::string_view, 6> kLabels = {
      "unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "utf-8", "utf8", "x-unicode20utf8"};
  for (std::string_view known : kLabels)
    if (lower == known) return true;
  return false;
}

JSValue js_decoder_ctor(JSContext* ctx, JSValueConst new_target, int argc, JSValueConst* argv) {
  const Args args(ctx, "TextDecoder", argc, argv);
  std::string label = "utf-8";
  Options options;
  bool fatal = false;
  bool ignore_bom = false;
  if ((args.present(0) &&
       !to_string(ctx, args[0], args.where("label"), label,
                  {.lone_surrogates = LoneSurrogates::replace, .coerce_primitives = true})) ||
      !args.options(1, "options", options) || !options.truthy("fatal", fatal) ||
      !options.truthy("ignoreBOM", ignore_bom))
    return JS_EXCEPTION;
  if (!is_utf8_label(label)) {
    return throw_range_error(ctx, "TextDecoder: the encoding label " + base::quote(label, 40) +
                                      " is not supported; only \"utf-8\" is available");
  }
  Value obj(ctx, new_instance(ctx, new_target, decoder_class_id(), "TextDecoder"));
  if (obj.is_exception()) return JS_EXCEPTION;
  void* memory = js_malloc(ctx, sizeof(DecoderState));
  if (memory == nullptr) return JS_EXCEPTION;
  JS_SetOpaque(obj.get(), new (memory) DecoderState(fatal, ignore_bom));  // the finalizer frees it
  return obj.release();
}

JSValue js_decoder_encoding(JSContext* ctx, JSValueConst this_val) {
  if (decoder_of(ctx, this_val, "encoding") == nullptr) return JS_EXCEPTION;
  return JS_NewString(ctx, "utf-8");
}

JSValue js_decoder_fatal(JSContext* ctx, JSValueConst this_val) {
  const DecoderState* state = decoder_of(ctx, this_val, "fatal");
  return state == nullptr ? JS_EXCEPTION : JS_NewBool(ctx, state->fatal);
}

JSValue js_decoder_ignore_bom(JSContext* ctx, JSValueConst this_val) {
  const DecoderState* state = decoder_of(ctx, this_val, "ignoreBOM");
  return state == nullptr ? JS_EXCEPTION : JS_NewBool(ctx, state->ignore_bom);
}

bool is_buffer_source(JSValueConst v) {
  return js_class::typed_array_class(v) != 0 || js_class::has_class(v, js_class::kArrayBuffer) ||
         js_class::has_class(v, js_class::kDataView);
}

JSValue js_decoder_decode(JSContext* ctx, JSValueConst this_val, int argc, JSValueConst* argv) {
  DecoderState* state = decoder_of(ctx, this_val, "decode");
  if (state == nullptr) return JS_EXCEPTION;
  const Args args(ctx, "TextDecoder.decode", argc, argv);
  // Web IDL order: the input's type, then the options (a `stream` getter may run skill code), then
  // the bytes are read, after all skill code of this call has run.
  if (args.present(0) && !is_buffer_source(args[0]))
    return throw_wrong_type(ctx, args.where("input"), "an ArrayBuffer, a TypedArray or a DataView", args[0]);
  Options options;
  bool stream = false;
  if (!args.options(1, "options", options) || !options.truthy("stream", stream)) return JS_EXCEPTION;
  ByteView input;
  if (args.present(0) && !to_buffer_source(ctx, args[0], args.where("input"), input)) return JS_EXCEPTION;

  if (!state->do_not_flush) state->decoder.reset();
  state->do_not_flush = stream;
  // Decoded in slices so that the host-side text is charged to the heap as it grows (up to 3 bytes
  // per input byte when every byte is invalid), before it can outgrow the limit.
  constexpr size_t kSlice = size_t{256} * 1024;
  HeapCharge charge(ctx);
  std::string text;
  try {
    size_t done = 0;
    do {
      const size_t n = std::min(kSlice, input.size - done);
      const bool last = done + n == input.size;
      if (!charge.cover(text.size() + 3 * n + 16)) {
        state->do_not_flush = false;
        state->decoder.reset();
        return JS_EXCEPTION;
      }
      if (!state->decoder.decode(input.data + done, n, last && !stream, text)) {
        state->do_not_flush = false;
        return throw_type_error(ctx,
                                "TextDecoder.decode: the input is not valid UTF-8 (the decoder is fatal)");
      }
      done += n;
    } while (done < input.size);
  } catch (const std::bad_alloc&) {
    return JS_ThrowOutOfMemory(ctx);
  }
  return new_string(ctx, text);
}

const JSCFunctionListEntry kDecoderProto[] = {
    list_getter("encoding", js_decoder_encoding),       list_getter("fatal", js_decoder_fatal),
    list_getter("ignoreBOM", js_decoder_ignore_bom),    list_function("decode", 0, js_decoder_decode),
    list_string("[Symbol.toStringTag]", "TextDecoder"),
};

}  // namespace

bool install_text_codec(JSContext* ctx, JSValueConst global) {
  return define_host_class(ctx, global,
                           HostClass{.name = "TextEncoder",
                                     .id = encoder_class_id(),
                                     .def = &kEncoderClass,
                                     .constructor = js_encoder_ctor,
                                     .length = 0,
                                     .proto = kEncoderProto,
                                     .proto_count = static_cast<int>(std::size(kEncoderProto))}) &&
         define_host_class(ctx, global,
                           HostClass{.name = "TextDecoder",
                                     .id = decoder_class_id(),
                                     .def = &kDecoderClass,
                                     .constructor = js_decoder_ctor,
                                     .length = 0,
                                     .proto = kDecoderProto,
                                     .proto_count = static_cast<int>(std::size(kDecoderProto))});
}

}  // namespace skillbox::bindings
