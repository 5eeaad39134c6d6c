// tests/support/scoped_env.h — environment variables set for one test and restored after it.
//
// The one place the tests change the process environment (the code under test reads it through
// getenv, the env capability's "no host values" case, libcurl's proxy variables, $SKILLBOX_HOME).
#pragma once

#include <map>
#include <optional>
#include <string>

namespace skillbox::testing {

/// Sets (or, with nullptr, unsets) variables; the destructor puts back what each was before the
/// first set(). Use it only from the test's own thread, before starting and after joining any thread
/// that reads the environment.
class ScopedEnv {
 public:
  ScopedEnv() = default;
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv();

  void set(const std::string& name, const char* value);

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

}  // namespace skillbox::testing
