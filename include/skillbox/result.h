// skillbox/result.h — the one result type of skillbox: a value or an error, never both.
//
// Every layer returns Result<T, E> where an operation can fail: the public API with E = Error (a
// message for the user), the store with E = StoreError, capabilities with E = bus::ErrorReply. It is a
// small stand-in for C++23's std::expected with the shape the public API has always had: ok(),
// explicit operator bool, *, -> and error(). Using the wrong side is a bug in the caller: debug builds
// assert (SQLite style), release builds throw (std::bad_variant_access, or std::bad_optional_access for
// Result<void, E>) rather than read garbage.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace skillbox {

/// A failure with a message meant for the user: what was wrong and what to do.
struct Error {
  std::string message;
};

/// A value of type T or an error of type E. T and E must be different types. Constructing from either
/// is implicit, so a function returning Result<T, E> can `return value;` or `return error;`.
template <typename T, typename E = Error>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(E error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT(google-explicit-constructor)

  /// True when this holds a value.
  [[nodiscard]] bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  /// The value. Precondition: ok().
  T& value() {
    assert(ok());
    return std::get<0>(v_);
  }
  const T& value() const {
    assert(ok());
    return std::get<0>(v_);
  }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  /// The error. Precondition: !ok().
  [[nodiscard]] const E& error() const {
    assert(!ok());
    return std::get<1>(v_);
  }
  [[nodiscard]] E& error() {
    assert(!ok());
    return std::get<1>(v_);
  }

 private:
  std::variant<T, E> v_;
};

/// Success without a value, or an error of type E. Default-constructed it is a success.
template <typename E>
class [[nodiscard]] Result<void, E> {
 public:
  Result() = default;
  Result(E error) : error_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  /// True when this holds no error.
  [[nodiscard]] bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }

  /// The error. Precondition: !ok().
  [[nodiscard]] const E& error() const {
    assert(!ok());
    return error_.value();
  }
  [[nodiscard]] E& error() {
    assert(!ok());
    return error_.value();
  }

 private:
  std::optional<E> error_;
};

}  // namespace skillbox
