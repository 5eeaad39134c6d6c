// policy/data_dir.cpp — where skillbox keeps workspaces and the store (docs/cli.md, `--data-dir`).
#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <system_error>
#include <vector>

#include "skillbox/skillbox.h"

namespace skillbox {
namespace {

namespace fs = std::filesystem;

/// The variable's value, or empty when it is unset or empty.
std::string env_value(const char* name) {
  const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): read-only use of the environment
  return v == nullptr ? std::string() : std::string(v);
}

/// The home directory: $HOME, else the password database entry of the current user.
fs::path home_dir() {
  std::string home = env_value("HOME");
  if (!home.empty()) return home;
  std::vector<char> buffer(16384);
  struct passwd pw {};
  struct passwd* found = nullptr;
  if (::getpwuid_r(::getuid(), &pw, buffer.data(), buffer.size(), &found) == 0 && found != nullptr &&
      found->pw_dir != nullptr) {
    return found->pw_dir;
  }
  return {};
}

fs::path make_absolute(const fs::path& p) {
  std::error_code ec;
  fs::path abs = fs::absolute(p, ec);
  return ec ? p : abs.lexically_normal();
}

}  // namespace

fs::path resolve_data_dir(const HostOptions& options) {
  if (!options.data_dir.empty()) return make_absolute(options.data_dir);
  if (const std::string v = env_value("SKILLBOX_HOME"); !v.empty()) return make_absolute(v);
  // XDG Base Directory spec: a relative $XDG_DATA_HOME is invalid and must be ignored.
  if (const std::string v = env_value("XDG_DATA_HOME"); !v.empty() && fs::path(v).is_absolute()) {
    return fs::path(v).lexically_normal() / "skillbox";
  }
  const fs::path home = home_dir();
  if (home.empty()) return {};
  return make_absolute(home / ".local" / "share" / "skillbox");
}

}  // namespace skillbox
