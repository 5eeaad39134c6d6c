// bindings/values.h — making JS values of the skill's realm from host data.
#pragma once

#include <quickjs.h>

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

namespace skillbox::bindings {

/// A new Uint8Array of ctx holding a copy of `size` bytes, made with the context's original
/// %Uint8Array% (captured at install: a skill that replaced the global `Uint8Array` still gets a real
/// one). Returns JS_EXCEPTION (pending) when out of memory.
JSValue new_uint8_array(JSContext* ctx, const uint8_t* data, size_t size);

/// Counts host memory against the runtime's heap limit for as long as it lives. Bindings that build
/// a host-side buffer whose size the skill chooses (decoded text, base64) charge its size first and
/// keep the charge up to date as it grows: without it one call could use several times the heap limit
/// in host memory. The charge is a block of the runtime that is never written, so it takes address
/// space but no resident memory. When the limit refuses it, an out-of-memory error is pending (the
/// limiter has recorded `memory_limit`) and the binding returns JS_EXCEPTION.
class HeapCharge {
 public:
  /// A charge of nothing yet. `ctx` may be null for a charge that is only moved into (cover() then
  /// must not be called).
  explicit HeapCharge(JSContext* ctx) : ctx_(ctx) {}
  ~HeapCharge() { release(); }
  HeapCharge(HeapCharge&& o) noexcept
      : ctx_(o.ctx_), block_(std::exchange(o.block_, nullptr)), charged_(std::exchange(o.charged_, 0)) {}
  HeapCharge& operator=(HeapCharge&& o) noexcept {
    if (this != &o) {
      release();
      ctx_ = o.ctx_;
      block_ = std::exchange(o.block_, nullptr);
      charged_ = std::exchange(o.charged_, 0);
    }
    return *this;
  }
  HeapCharge(const HeapCharge&) = delete;
  HeapCharge& operator=(const HeapCharge&) = delete;

  /// Raises the charge to `bytes` (never lowers it). False when the heap limit refuses.
  [[nodiscard]] bool cover(size_t bytes) {
    if (bytes <= charged_) return true;
    void* grown = js_realloc(ctx_, block_, bytes);
    if (grown == nullptr) return false;
    block_ = grown;
    charged_ = bytes;
    return true;
  }

 private:
  void release() {
    if (block_ != nullptr) js_free(ctx_, block_);
    block_ = nullptr;
    charged_ = 0;
  }

  JSContext* ctx_;
  void* block_ = nullptr;
  size_t charged_ = 0;
};

/// A JS string of ctx from `size` bytes decoded as the WHATWG "UTF-8 decode" does (invalid sequences
/// become U+FFFD; a leading BOM is dropped unless `ignore_bom`). Valid input becomes the string with
/// no host copy; otherwise the host-side text is charged to the heap (HeapCharge) as it grows, so a
/// body of invalid bytes (3 bytes of text each) cannot outgrow the memory limit in host memory.
/// JS_EXCEPTION (pending) when out of memory.
JSValue new_string_from_bytes(JSContext* ctx, const uint8_t* data, size_t size, bool ignore_bom);

/// A JS string of ctx from UTF-8 text (JS_NewStringLen). Invalid UTF-8 bytes read as Latin-1.
inline JSValue new_string(JSContext* ctx, std::string_view text) {
  return JS_NewStringLen(ctx, text.data(), text.size());
}

}  // namespace skillbox::bindings
