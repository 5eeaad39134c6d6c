// bindings/values.cpp — making JS values of the skill's realm from host data.
#include "bindings/values.h"

#include <algorithm>
#include <new>
#include <string>
#include <string_view>

#include "base/utf8.h"
#include "base/utf8_decoder.h"
#include "bindings/context_state.h"
#include "bindings/owners.h"

namespace skillbox::bindings {

JSValue new_uint8_array(JSContext* ctx, const uint8_t* data, size_t size) {
  // Builds the typed arrays first if the skill has not touched them yet (engine/realm.h): the buffer
  // must get the ArrayBuffer prototype.
  const ContextState* state = context_state_with_typed_arrays(ctx);
  if (state == nullptr) return JS_EXCEPTION;
  const Value buffer(ctx, JS_NewArrayBufferCopy(ctx, data, size));
  if (buffer.is_exception()) return JS_EXCEPTION;
  // new %Uint8Array%(buffer): the constructor's `prototype` is non-writable and non-configurable, so
  // this runs no skill code and the result has the original Uint8Array.prototype.
  JSValueConst argv[] = {buffer.get()};
  return JS_CallConstructor(ctx, state->uint8_array.get(), 1, argv);
}

JSValue new_string_from_bytes(JSContext* ctx, const uint8_t* data, size_t size, bool ignore_bom) {
  const std::string_view view(reinterpret_cast<const char*>(data), size);
  const bool bom = view.starts_with("\xEF\xBB\xBF");
  if ((ignore_bom || !bom) && base::utf8::is_valid(view)) return new_string(ctx, view);
  base::utf8::Utf8Decoder decoder(/*fatal=*/false, ignore_bom);
  constexpr size_t kSlice = size_t{256} * 1024;
  HeapCharge charge(ctx);
  std::string text;
  try {
    size_t done = 0;
    do {
      const size_t n = std::min(kSlice, size - done);
      if (!charge.cover(text.capacity() + 3 * n + 16)) return JS_EXCEPTION;
      text.reserve(text.size() + 3 * n + 16);
      (void)decoder.decode(data + done, n, done + n == size, text);
      done += n;
    } while (done < size);
  } catch (const std::bad_alloc&) {
    return JS_ThrowOutOfMemory(ctx);
  }
  return new_string(ctx, text);
}

}  // namespace skillbox::bindings
