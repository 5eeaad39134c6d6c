// compat/bundle_manifest.cpp — load_skill(): an OpenHuman bundle's manifest.json adapted into a Manifest.
//
// An OpenHuman manifest describes a bundle; it grants nothing. What the bundle may do comes from the
// operator, in a `skill.json` beside manifest.json that holds only `limits` and `permissions` (the same
// schema and checks as a skillbox manifest, plus `permissions.db`), exactly as for skillbox skills.
// Keys OpenHuman ignored are ignored here too and listed for `skillbox check`; a known key of the wrong
// type is an error, since the bundle would not work as its author meant.
#include "compat/bundle_manifest.h"

#include <algorithm>
#include <string>
#include <system_error>

#include "base/file_read.h"
#include "base/quote.h"
#include "base/skill_id.h"
#include "base/utf8.h"
#include "policy/strict_json.h"
#include "skillbox/skillbox.h"

namespace skillbox {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using policy::KeyPath;

constexpr const char* kDoc = "manifest.json";
constexpr const char* kGrantDoc = "skill.json";
constexpr uint64_t kMaxFileBytes = 64 * 1024;  // as for skill.json (policy::kMaxManifestBytes)
constexpr uint64_t kMaxMemoryLimitMb = Limits::kMaxMemoryBytes / (1024 * 1024);

bool is_within(const fs::path& root, const fs::path& p) {
  const auto [r, q] = std::mismatch(root.begin(), root.end(), p.begin(), p.end());
  return r == root.end();
}

/// Collects every problem of one document, in the style of docs/manifest.md "Error messages".
class Problems {
 public:
  explicit Problems(std::string doc) : doc_(std::move(doc)) {}
  void add(const KeyPath& path, const std::string& what) {
    lines_.push_back(doc_ + ": " + (path.empty() ? "" : path.str() + ": ") + what);
  }
  void expected(const KeyPath& path, const std::string& what, const json& got) {
    add(path, "expected " + what + ", got " + policy::describe_json(got));
  }
  [[nodiscard]] bool ok() const { return lines_.empty(); }
  [[nodiscard]] std::string message() const {
    std::string out;
    for (const std::string& line : lines_) out += (out.empty() ? "" : "\n") + line;
    return out;
  }

 private:
  std::string doc_;
  std::vector<std::string> lines_;
};

bool read_string(Problems& p, const json& v, const KeyPath& path, std::string& out, size_t max_bytes = 4096) {
  if (!v.is_string()) {
    p.expected(path, "a string", v);
    return false;
  }
  const auto& s = v.get_ref<const std::string&>();
  if (s.size() > max_bytes) {
    p.add(path, "longer than " + std::to_string(max_bytes) + " bytes");
    return false;
  }
  out = s;
  return true;
}

void read_string_list(Problems& p, const json& v, const KeyPath& path, std::vector<std::string>& out) {
  if (!v.is_array()) {
    p.expected(path, "an array of strings", v);
    return;
  }
  for (size_t i = 0; i < v.size(); ++i) {
    std::string s;
    if (read_string(p, v[i], path.index(i), s)) out.push_back(std::move(s));
  }
}

void read_mode(Problems& p, const json& v, const KeyPath& path, BundleSetupMode& mode,
               std::vector<std::string>& unknown) {
  if (!v.is_object()) {
    p.expected(path, "an object", v);
    return;
  }
  for (const auto& [key, value] : v.items()) {
    const KeyPath at = path.key(key);
    if (key == "type") {
      if (read_string(p, value, at, mode.type) && mode.type != "managed" && mode.type != "self_hosted" &&
          mode.type != "text")
        p.expected(at, "one of \"managed\", \"self_hosted\", \"text\"", value);
    } else if (key == "label") {
      (void)read_string(p, value, at, mode.label);
    } else if (key == "provider") {
      (void)read_string(p, value, at, mode.provider);
    } else if (key == "scopes") {
      read_string_list(p, value, at, mode.scopes);
    } else if (key == "apiBaseUrl") {
      (void)read_string(p, value, at, mode.api_base_url);
    } else if (key == "fields") {
      if (!value.is_array()) {
        p.expected(at, "an array of field objects", value);
        continue;
      }
      for (size_t i = 0; i < value.size(); ++i) {
        const json& f = value[i];
        if (!f.is_object() || !f.contains("name")) {
          p.expected(at.index(i), "an object with a \"name\"", f);
          continue;
        }
        std::string name;
        if (read_string(p, f["name"], at.index(i).key("name"), name)) mode.field_names.push_back(name);
      }
    } else if (key == "description" || key == "textDescription" || key == "textPlaceholder") {
      std::string ignored;
      (void)read_string(p, value, at, ignored);
    } else {
      unknown.push_back(at.str());
    }
  }
}

void read_setup(Problems& p, const json& v, const KeyPath& path, BundleManifest& b) {
  if (!v.is_object()) {
    p.expected(path, "an object", v);
    return;
  }
  for (const auto& [key, value] : v.items()) {
    const KeyPath at = path.key(key);
    if (key == "required") {
      if (!value.is_boolean())
        p.expected(at, "true or false", value);
      else
        b.setup_required = value.get<bool>();
    } else if (key == "label") {
      (void)read_string(p, value, at, b.setup_label);
    } else if (key == "oauth") {
      // The older form: one managed OAuth mode.
      BundleSetupMode mode;
      mode.type = "managed";
      if (!value.is_object()) {
        p.expected(at, "an object", value);
        continue;
      }
      for (const auto& [k, x] : value.items()) {
        if (k == "provider")
          (void)read_string(p, x, at.key(k), mode.provider);
        else if (k == "scopes")
          read_string_list(p, x, at.key(k), mode.scopes);
        else if (k == "apiBaseUrl")
          (void)read_string(p, x, at.key(k), mode.api_base_url);
        else
          b.unknown_keys.push_back(at.key(k).str());
      }
      b.setup_modes.push_back(std::move(mode));
    } else if (key == "auth") {
      if (!value.is_object() || !value.contains("modes")) {
        p.expected(at, "an object {\"modes\": [...]}", value);
        continue;
      }
      for (const auto& [k, x] : value.items()) {
        if (k != "modes") {
          b.unknown_keys.push_back(at.key(k).str());
          continue;
        }
        if (!x.is_array()) {
          p.expected(at.key(k), "an array of modes", x);
          continue;
        }
        for (size_t i = 0; i < x.size(); ++i) {
          BundleSetupMode mode;
          read_mode(p, x[i], at.key(k).index(i), mode, b.unknown_keys);
          if (mode.type.empty())
            p.add(at.key(k).index(i), "missing \"type\" (\"managed\", \"self_hosted\" or \"text\")");
          b.setup_modes.push_back(std::move(mode));
        }
      }
    } else {
      b.unknown_keys.push_back(at.str());
    }
  }
}

bool is_env_name(std::string_view name) {
  if (name.empty() || name.size() > 128 || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

struct Parsed {
  std::string id, name, version, entry = "index.js";
  BundleManifest bundle;
};

Result<Parsed> parse_bundle_manifest(std::string_view text) {
  if (text.size() > kMaxFileBytes)
    return Error{std::string(kDoc) + ": larger than " + std::to_string(kMaxFileBytes) + " bytes"};
  if (const auto bad = base::utf8::find_invalid(text))
    return Error{std::string(kDoc) + ": not valid UTF-8 at byte " + std::to_string(*bad) +
                 "; save the file as UTF-8"};
  Result<json> doc = policy::parse_strict_json(text, kDoc);
  if (!doc) return doc.error();
  Problems p(kDoc);
  const KeyPath root;
  if (!doc->is_object())
    return Error{std::string(kDoc) + ": expected one JSON object, got " + policy::describe_json(*doc)};
  Parsed out;
  BundleManifest& b = out.bundle;
  for (const auto& [key, value] : doc->items()) {
    const KeyPath at = root.key(key);
    if (key == "id") {
      if (read_string(p, value, at, out.id, 64) && !base::is_valid_skill_id(out.id))
        p.expected(
            at,
            "a skill id: 1 to 64 characters from a-z, 0-9, '.', '_' and '-', starting with a letter or digit",
            value);
    } else if (key == "name") {
      (void)read_string(p, value, at, out.name, 128);
    } else if (key == "version") {
      (void)read_string(p, value, at, out.version, 64);
    } else if (key == "description") {
      (void)read_string(p, value, at, b.description);
    } else if (key == "entry") {
      (void)read_string(p, value, at, out.entry, 1024);
    } else if (key == "runtime") {
      if (read_string(p, value, at, b.runtime) && b.runtime != "quickjs" && b.runtime != "v8")
        p.expected(at, "\"quickjs\" or \"v8\"", value);
    } else if (key == "platforms") {
      read_string_list(p, value, at, b.platforms);
    } else if (key == "env") {
      std::vector<std::string> names;
      read_string_list(p, value, at, names);
      for (size_t i = 0; i < names.size(); ++i) {
        if (!is_env_name(names[i]))
          p.expected(at.index(i), "an environment variable name (A-Z a-z 0-9 _)", names[i]);
        else
          b.env.push_back(names[i]);
      }
    } else if (key == "skill_type") {
      (void)read_string(p, value, at, b.skill_type);
    } else if (key == "auto_start" || key == "ignoreInProduction") {
      if (!value.is_boolean())
        p.expected(at, "true or false", value);
      else if (key == "auto_start")
        b.auto_start = value.get<bool>();
    } else if (key == "memory_limit_mb") {
      if (!value.is_number_integer() || value.get<int64_t>() < 1 || value.get<uint64_t>() > kMaxMemoryLimitMb)
        p.expected(at, "an integer from 1 to " + std::to_string(kMaxMemoryLimitMb), value);
      else
        b.memory_limit_mb = value.get<uint64_t>();
    } else if (key == "setup") {
      read_setup(p, value, at, b);
    } else if (key == "entity_schema") {
      // Describes what the bundle syncs; skillbox has no use for it.
    } else {
      b.unknown_keys.push_back(at.str());
    }
  }
  if (!doc->contains("id"))
    p.add(root.key("id"), "missing required key; add \"id\": the bundle's short name, such as \"notion\"");
  if (!p.ok()) return Error{p.message()};
  if (out.name.empty()) out.name = out.id;
  if (out.version.empty()) out.version = "0.0.0";
  return out;
}

}  // namespace

namespace compat {

Result<Manifest> adapt_bundle_manifest(std::string_view manifest_text,
                                       std::optional<std::string_view> grant_text) {
  Result<Parsed> parsed = parse_bundle_manifest(manifest_text);
  if (!parsed) return parsed.error();

  // The operator's grants: only limits and permissions; the rest of a skillbox manifest is the bundle's.
  json v1 = json::object();
  v1["id"] = parsed->id;
  v1["entry"] = parsed->entry;
  DbPolicy db;
  if (grant_text) {
    if (grant_text->size() > kMaxFileBytes)
      return Error{std::string(kGrantDoc) + ": larger than " + std::to_string(kMaxFileBytes) + " bytes"};
    if (!base::utf8::is_valid(*grant_text))
      return Error{std::string(kGrantDoc) + ": not valid UTF-8; save the file as UTF-8"};
    Result<json> grants = policy::parse_strict_json(*grant_text, kGrantDoc);
    if (!grants) return grants.error();
    if (!grants->is_object())
      return Error{std::string(kGrantDoc) + ": expected one JSON object, got " +
                   policy::describe_json(*grants)};
    Problems p(kGrantDoc);
    for (const auto& [key, value] : grants->items()) {
      if (key == "limits" || key == "permissions") continue;
      if (key == "$schema") {  // for editors (schemas/skill.schema.json); ignored
        if (!value.is_string())
          p.expected(KeyPath().key(key), "a string (the URL or path of a JSON Schema)", value);
        continue;
      }
      p.add(KeyPath().key(key),
            "not allowed beside manifest.json; this skill.json holds only the operator's grants (\"limits\", "
            "\"permissions\"), and the bundle's id, name, version and entry come from manifest.json");
    }
    if (grants->contains("permissions") && (*grants)["permissions"].is_object() &&
        (*grants)["permissions"].contains("db")) {
      // permissions.db exists only for bundles: read here, then taken out for the common parser.
      const json& d = (*grants)["permissions"]["db"];
      const KeyPath at = KeyPath().key("permissions").key("db");
      if (!d.is_object()) {
        p.expected(at, "an object {\"quota_bytes\": N}", d);
      } else {
        for (const auto& [key, value] : d.items()) {
          if (key != "quota_bytes") {
            p.add(at.key(key), "unknown key; expected quota_bytes");
          } else if (!value.is_number_integer() || value.get<int64_t>() < int64_t(kMinDbQuotaBytes) ||
                     value.get<uint64_t>() > kMaxDbQuotaBytes) {
            p.expected(at.key(key),
                       "an integer from " + std::to_string(kMinDbQuotaBytes) + " to " +
                           std::to_string(kMaxDbQuotaBytes),
                       value);
          } else {
            db.quota_bytes = value.get<uint64_t>();
          }
        }
      }
      (*grants)["permissions"].erase("db");
    }
    if (!p.ok()) return Error{p.message()};
    if (grants->contains("limits")) v1["limits"] = (*grants)["limits"];
    if (grants->contains("permissions")) v1["permissions"] = (*grants)["permissions"];
  }
  Result<Manifest> m = Skill::parse_manifest(v1.dump());
  if (!m) {
    // The entry rule's message names skill.json; the key came from manifest.json.
    std::string msg = m.error().message;
    const std::string from = "skill.json: entry:";
    if (msg.rfind(from, 0) == 0) msg = std::string(kDoc) + ": entry:" + msg.substr(from.size());
    return Error{msg};
  }
  m->name = parsed->name;
  m->version = parsed->version;
  m->permissions.db = db;
  if (parsed->bundle.memory_limit_mb)
    m->limits.memory_bytes = std::min(m->limits.memory_bytes, *parsed->bundle.memory_limit_mb * 1024 * 1024);
  m->format = SkillFormat::openhuman;
  parsed->bundle.has_grants = grant_text.has_value();
  m->bundle = std::move(parsed->bundle);
  return m;
}

}  // namespace compat

Result<Skill> load_skill(const fs::path& dir) {
  std::error_code ec;
  if (dir.empty() || !fs::exists(dir / "manifest.json", ec)) return Skill::load(dir);
  const std::string prefix =
      "cannot load bundle " + base::quote(dir.string(), 200, base::QuoteStyle::json) + ": ";
  const fs::path root = fs::canonical(dir, ec);
  if (ec) return Error{prefix + ec.message()};
  // Reads one file of the folder: regular, capped, never through a link leading outside.
  auto read = [&](const char* name, bool required) -> Result<std::optional<std::string>> {
    const fs::path path = fs::canonical(root / name, ec);
    if (ec == std::errc::no_such_file_or_directory && !required) return std::optional<std::string>();
    if (ec) return Error{prefix + name + ": " + ec.message()};
    if (!is_within(root, path))
      return Error{prefix + name + " is a symbolic link that leads outside the bundle folder"};
    auto text = base::read_file(path.c_str(), {.max_bytes = kMaxFileBytes});
    if (!text) return Error{prefix + name + ": " + text.error().message};
    return std::optional<std::string>(std::move(*text));
  };
  auto manifest_text = read("manifest.json", true);
  if (!manifest_text) return manifest_text.error();
  auto grant_text = read("skill.json", false);
  if (!grant_text) return grant_text.error();
  std::optional<std::string_view> grants;
  if (*grant_text) grants = **grant_text;
  Result<Manifest> m = compat::adapt_bundle_manifest(**manifest_text, grants);
  if (!m) return m.error();

  const std::string entry = base::quote(m->entry, 200, base::QuoteStyle::json);
  const fs::path entry_path = fs::canonical(root / m->entry, ec);
  if (ec == std::errc::no_such_file_or_directory)
    return Error{std::string(kDoc) + ": entry: file " + entry +
                 " not found in the bundle folder; build the bundle (index.js) or fix \"entry\""};
  if (ec) return Error{std::string(kDoc) + ": entry: " + entry + ": " + ec.message()};
  if (!is_within(root, entry_path) || !fs::is_regular_file(entry_path, ec))
    return Error{std::string(kDoc) + ": entry: " + entry +
                 " must be a regular file inside the bundle folder"};
  return Skill(root, std::move(*m));
}

}  // namespace skillbox
