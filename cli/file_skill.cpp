// cli/file_skill.cpp — the manifest `skillbox run FILE.js` makes up from the command line.
#include "cli/file_skill.h"

#include <array>
#include <cstdint>
#include <cstdio>

#include "base/escape.h"

namespace skillbox::cli {
namespace fs = std::filesystem;
namespace {

/// The methods skill.json may grant (docs/manifest.md "http"): a granted prefix allows all of them.
constexpr std::array<const char*, 7> kAllMethods = {"GET",   "HEAD",   "POST",   "PUT",
                                                    "PATCH", "DELETE", "OPTIONS"};

/// Longest stem kept in the id: the id rule allows 64 bytes, and "-" and 8 hex digits follow.
constexpr size_t kMaxStemBytes = 40;

/// FNV-1a, 64 bits: a short, stable name for a path (not a security boundary: the id still binds to
/// the folder, docs/manifest.md "Identity").
uint64_t fnv1a(std::string_view text) {
  uint64_t h = 14695981039346656037ull;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

/// `stem` made to fit the id rule ([a-z0-9][a-z0-9._-]{0,63}), with the hash of `canonical` after it.
std::string file_skill_id(const std::string& stem, const std::string& canonical) {
  std::string id;
  for (const char c : stem) {
    if (id.size() == kMaxStemBytes) break;
    if (c >= 'A' && c <= 'Z') {
      id += static_cast<char>(c - 'A' + 'a');
    } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
               (!id.empty() && (c == '.' || c == '_' || c == '-'))) {
      id += c;
    } else if (!id.empty()) {
      id += '-';
    }
  }
  if (id.empty()) id = "script";
  char hash[9];
  std::snprintf(hash, sizeof hash, "%08x", static_cast<unsigned>(fnv1a(canonical) & 0xffffffffu));
  return id + "-" + hash;
}

bool is_loopback_host(const std::string& host) {
  return host == "127.0.0.1" || host == "[::1]" || host == "localhost";
}

/// Applies --allow-http PREFIX... as grants: an error names the prefix and why it is not an allow entry.
std::optional<std::string> grant_http(HttpPolicy& http, const std::vector<std::string>& prefixes) {
  bool all_loopback = !prefixes.empty();
  for (const std::string& prefix : prefixes) {
    if (auto why = http.allow.push_back(prefix)) return "--allow-http " + prefix + ": " + *why;
    all_loopback = all_loopback && is_loopback_host(http.allow.entries().back().host);
  }
  if (!prefixes.empty()) http.methods.assign(kAllMethods.begin(), kAllMethods.end());
  // Only loopback hosts are allowed, so the private-address refusal (which guards public names that
  // resolve to private addresses) has nothing left to guard, and a local server can be reached.
  http.allow_private_addresses = all_loopback;
  return std::nullopt;
}

}  // namespace

std::optional<std::string> typescript_entry_problem(std::string_view entry) {
  const auto ends = [&](std::string_view ext) { return entry.ends_with(ext); };
  if (!ends(".ts") && !ends(".mts") && !ends(".cts") && !ends(".tsx")) return std::nullopt;
  const std::string name(entry);
  const std::string stem = fs::path(name).replace_extension(".js").string();
  return name +
         " is TypeScript, which skillbox does not run: compile it to JavaScript first (e.g. npx esbuild " +
         name + " --bundle --format=esm --outfile=" + stem +
         ", or tsc) and run the .js file; `skillbox init DIR --ts` scaffolds a TypeScript skill whose "
         "`npm run build` does this";
}

Result<Skill> file_skill(const fs::path& file, const NarrowingFlags& grants) {
  std::error_code ec;
  const fs::path canonical = fs::canonical(file, ec);
  if (ec) return Error{"cannot read " + file.string() + ": " + ec.message()};
  if (auto ts = typescript_entry_problem(canonical.filename().string())) return Error{*ts};
  Manifest m;
  m.entry = canonical.filename().string();
  m.name = m.entry;
  m.version = "0.0.0";
  m.id = file_skill_id(canonical.stem().string(), canonical.string());
  if (auto why = grant_http(m.permissions.http, grants.allow_http)) return Error{*why};
  if (auto mode = grants.narrowing().fs_mode) m.permissions.fs.mode = *mode;
  return Skill(canonical.parent_path(), std::move(m));
}

std::optional<std::string> stale_build_note(const Skill& skill) {
  constexpr size_t kMaxLooked = 2000;
  std::error_code ec;
  const fs::path entry = skill.dir() / skill.manifest().entry;
  const fs::file_time_type built = fs::last_write_time(entry, ec);
  if (ec) return std::nullopt;
  fs::path newest;
  fs::file_time_type newest_time = built;
  size_t looked = 0;
  for (fs::recursive_directory_iterator it(skill.dir(), ec), end; !ec && it != end && looked < kMaxLooked;
       it.increment(ec), ++looked) {
    const std::string name = it->path().filename().string();
    if (name.starts_with(".") || name == "node_modules") {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    const std::string ext = it->path().extension().string();
    if ((ext != ".ts" && ext != ".mts" && ext != ".tsx") || name.ends_with(".d.ts") ||
        !it->is_regular_file(ec))
      continue;
    const fs::file_time_type when = it->last_write_time(ec);
    if (!ec && when > newest_time) {
      newest_time = when;
      newest = it->path();
    }
  }
  if (newest.empty()) return std::nullopt;
  return base::escape_text(newest.lexically_relative(skill.dir()).string()) + " changed after " +
         base::escape_text(skill.manifest().entry) +
         " was built, so this run uses the old build: run `npm run build` first (or keep `npm run watch` "
         "running beside `skillbox run --watch`)";
}

}  // namespace skillbox::cli
