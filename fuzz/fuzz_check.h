// fuzz/fuzz_check.h — the invariant check of the fuzz targets.
//
// A broken invariant is a finding: FUZZ_CHECK prints what was expected and aborts, so libFuzzer saves
// the input as a crash file. Sanitizer reports and crashes are findings too, without any check.
#pragma once

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(condition)                                                                \
  do {                                                                                       \
    if (!(condition)) {                                                                      \
      std::fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #condition); \
      std::abort();                                                                          \
    }                                                                                        \
  } while (false)
