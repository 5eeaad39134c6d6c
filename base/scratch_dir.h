// base/scratch_dir.h — a throwaway data directory for runs that must not touch the user's state.
//
// `skillbox test` gives each test one; `skillbox check` and `skillbox tools` evaluate a bundle in one
// (listing its tools runs the bundle's top-level code, which may open its database or write its
// store), so neither leaves a binding, a workspace or a db.sqlite in the real data directory; `skillbox
// mcp` and serve's /mcp list a bundle's tools in one for the same reason.
#pragma once

#include <stdlib.h>  // mkdtemp

#include <filesystem>
#include <string>
#include <system_error>

namespace skillbox::base {

/// A fresh folder under the temp directory (mkdtemp, 0700) whose name starts with `prefix`, removed
/// with everything in it when this object goes away. path() is empty when it could not be made.
class ScratchDir {
 public:
  explicit ScratchDir(const char* prefix = "skillbox-test-") {
    std::error_code ec;
    std::filesystem::path base = std::filesystem::temp_directory_path(ec);
    if (ec) base = "/tmp";
    std::string pattern = (base / (std::string(prefix) + "XXXXXX")).string();
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace skillbox::base
