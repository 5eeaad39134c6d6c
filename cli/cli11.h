// cli/cli11.h — includes CLI11 without its warnings.
//
// GCC 12 reports a false -Wnull-dereference inside CLI11 2.1's inline string helpers (std::vector
// relocation in CLI::detail::split); the warning is not about our code, so it is silenced here only.
#pragma once

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnull-dereference"
#include <CLI/CLI.hpp>  // IWYU pragma: export
#pragma GCC diagnostic pop
