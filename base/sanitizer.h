// base/sanitizer.h — whether this translation unit is built with a sanitizer, at compile time.
//
// gcc defines __SANITIZE_ADDRESS__ / __SANITIZE_THREAD__; clang answers __has_feature. UBSan alone is
// not detectable this way; the `asan` preset builds ASan and UBSan together.
#pragma once

namespace skillbox::base {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

#if defined(__SANITIZE_THREAD__)
inline constexpr bool kThreadSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool kThreadSanitizer = true;
#else
inline constexpr bool kThreadSanitizer = false;
#endif
#else
inline constexpr bool kThreadSanitizer = false;
#endif

/// Built with AddressSanitizer or ThreadSanitizer (the `asan` and `tsan` presets).
inline constexpr bool kSanitizerBuild = kAddressSanitizer || kThreadSanitizer;

}  // namespace skillbox::base
