// tests/support/scoped_env.cpp — see scoped_env.h.
//
// getenv/setenv/unsetenv are flagged by concurrency-mt-unsafe because another thread reading the
// environment meanwhile is a data race. gtest runs one test at a time on the main thread, and
// ScopedEnv's contract (scoped_env.h) keeps every other thread of the test from running while it
// writes, which the check cannot see: hence the suppressions below, on these three calls only.
#include "support/scoped_env.h"

#include <cstdlib>

namespace skillbox::testing {
namespace {

void put(const std::string& name, const char* value) {
  if (value) {
    ::setenv(name.c_str(), value, 1);  // NOLINT(concurrency-mt-unsafe): single-threaded, see top
  } else {
    ::unsetenv(name.c_str());  // NOLINT(concurrency-mt-unsafe): single-threaded, see top
  }
}

}  // namespace

void ScopedEnv::set(const std::string& name, const char* value) {
  if (!saved_.count(name)) {
    const char* old = std::getenv(name.c_str());  // NOLINT(concurrency-mt-unsafe): see top
    saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
  }
  put(name, value);
}

ScopedEnv::~ScopedEnv() {
  for (const auto& [name, value] : saved_) put(name, value ? value->c_str() : nullptr);
}

}  // namespace skillbox::testing
