// policy/manifest.cpp — Skill::parse_manifest: the whole `skill.json` schema (docs/manifest.md).
//
// Validation collects every problem rather than stopping at the first, so that one `skillbox check`
// shows an author everything to fix. Each problem is one line in one style:
//
//   skill.json: <key path>: expected <what is allowed>, got <what was found> (<why>, when useful)
//   skill.json: <key path>: <problem>; <what to do>
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/json_schema.h"
#include "base/quote.h"
#include "base/skill_id.h"
#include "base/utf8.h"
#include "policy/ceilings.h"
#include "policy/strict_json.h"
#include "skillbox/skillbox.h"

namespace skillbox {
namespace {

using nlohmann::json;
using policy::describe_json;
using policy::KeyPath;

constexpr std::string_view kDoc = "skill.json";
constexpr size_t kMaxReportedProblems = 20;
constexpr uint64_t kMiB = policy::kMiB;
constexpr uint64_t kKiB = policy::kKiB;

using Keys = std::span<const std::string_view>;

// "$schema" names the JSON Schema editors check the file against (schemas/skill.schema.json); ignored.
constexpr std::array<std::string_view, 8> kTopKeys = {"id",     "name",        "version", "entry",
                                                      "limits", "permissions", "$schema", "tools"};
constexpr std::array<std::string_view, 4> kLimitKeys = {"memory_mb", "steps", "stack_kb", "timeout_ms"};
constexpr std::array<std::string_view, 4> kPermissionKeys = {"fs", "http", "env", "store"};
constexpr std::array<std::string_view, 4> kFsKeys = {"mode", "quota_bytes", "max_files", "max_file_bytes"};
constexpr std::array<std::string_view, 10> kHttpKeys = {
    "allow",         "methods",        "max_request_bytes", "max_response_bytes",      "timeout_ms",
    "max_redirects", "max_concurrent", "max_requests",      "allow_private_addresses", "fetch"};
constexpr std::array<std::string_view, 3> kStoreKeys = {"quota_bytes", "max_keys", "max_value_bytes"};
constexpr std::array<std::string_view, 7> kToolKeys = {
    "name", "export", "title", "description", "input_schema", "output_schema", "annotations"};
constexpr std::array<std::string_view, 2> kToolAnnotationKeys = {"title", "idempotent_hint"};
/// MCP annotations skillbox derives from the permissions (mcp/tools.h), in both spellings an author may
/// try: a skill claiming them could tell a client a writing tool is read-only.
constexpr std::array<std::string_view, 6> kDerivedAnnotationKeys = {"readOnlyHint",     "destructiveHint",
                                                                    "openWorldHint",    "read_only_hint",
                                                                    "destructive_hint", "open_world_hint"};

/// Edit distance, for "did you mean" on unknown keys. Keys are short; O(n*m) is nothing.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      const size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string join(Keys keys, std::string_view sep, bool quote) {
  std::string out;
  for (std::string_view k : keys) {
    if (!out.empty()) out += sep;
    out += quote ? "\"" + std::string(k) + "\"" : std::string(k);
  }
  return out;
}

/// True when `text` has a C0 control character, DEL, or a C1 control (U+0080..U+009F): none of them
/// belongs in a name or path, and each can rewrite a terminal that prints it.
bool has_control(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    uint32_t cp = 0;
    (void)base::utf8::next(text, i, cp);
    if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) return true;
  }
  return false;
}

class Validator {
 public:
  /// Records "skill.json: <path>: <problem>".
  void problem(const KeyPath& path, const std::string& text) {
    problems_.push_back(std::string(kDoc) + ": " + (path.empty() ? "" : path.str() + ": ") + text);
  }

  /// Records "skill.json: <path>: expected <what>, got <value>[ (<why>)]".
  void expected(const KeyPath& path, std::string_view what, const json& got, std::string_view why = {}) {
    std::string text = "expected " + std::string(what) + ", got " + describe_json(got);
    if (!why.empty()) text += " (" + std::string(why) + ")";
    problem(path, text);
  }

  /// Checks that `value` is an object whose keys are all in `keys`, reporting each unknown key.
  /// Returns whether `value` is an object (its known keys can then be read).
  bool object(const json& value, const KeyPath& path, Keys keys) {
    if (!value.is_object()) {
      if (path.empty()) {
        problem(path, "expected a JSON object at the top level, got " + describe_json(value));
      } else {
        expected(path, "an object", value);
      }
      return false;
    }
    for (const auto& [name, member] : value.items()) {
      if (std::find(keys.begin(), keys.end(), name) != keys.end()) continue;
      std::string text = "unknown key; expected one of " + join(keys, ", ", false);
      if (const auto guess = closest(name, keys)) text += " (did you mean \"" + std::string(*guess) + "\"?)";
      problem(path.key(name), text);
    }
    return true;
  }

  /// Reads an integer in [min, max]. Whole numbers written as floats (1e7) are accepted.
  std::optional<uint64_t> integer(const json& value, const KeyPath& path, uint64_t min, uint64_t max) {
    std::optional<uint64_t> n;
    if (value.is_number_unsigned()) {
      n = value.get<uint64_t>();
    } else if (value.is_number_integer()) {
      const auto v = value.get<int64_t>();
      if (v >= 0) n = static_cast<uint64_t>(v);
    } else if (value.is_number_float()) {
      const double d = value.get<double>();
      // 2^63 bounds the conversion; every ceiling is far below it.
      if (std::isfinite(d) && d >= 0 && d < 9.2e18 && std::floor(d) == d) n = static_cast<uint64_t>(d);
    }
    if (!n || *n < min || *n > max) {
      expected(path, "an integer from " + std::to_string(min) + " to " + std::to_string(max), value);
      return std::nullopt;
    }
    return n;
  }

  std::optional<bool> boolean(const json& value, const KeyPath& path) {
    if (!value.is_boolean()) {
      expected(path, "true or false", value);
      return std::nullopt;
    }
    return value.get<bool>();
  }

  /// Reports a missing required key.
  void missing(const KeyPath& path, std::string_view what_to_add) {
    problem(path, "missing required key; add " + std::string(what_to_add));
  }

  [[nodiscard]] bool ok() const { return problems_.empty(); }

  [[nodiscard]] std::string message() const {
    std::string out;
    const size_t shown = std::min(problems_.size(), kMaxReportedProblems);
    for (size_t i = 0; i < shown; ++i) {
      if (i > 0) out += '\n';
      out += problems_[i];
    }
    if (problems_.size() > shown) {
      out += "\n" + std::string(kDoc) + ": ... and " + std::to_string(problems_.size() - shown) +
             " more problems";
    }
    return out;
  }

 private:
  static std::optional<std::string_view> closest(std::string_view name, Keys keys) {
    const std::string lowered = ascii_lower(name);
    std::optional<std::string_view> best;
    size_t best_distance = 3;  // suggest only near misses
    for (std::string_view k : keys) {
      const size_t d = lowered == k ? 0 : edit_distance(lowered, k);
      if (d < best_distance) {
        best_distance = d;
        best = k;
      }
    }
    return best;
  }

  std::vector<std::string> problems_;
};

/// Calls `read(member, path)` for `key` when `object` has it.
void with_key(const json& object, const KeyPath& path, std::string_view key,
              const std::function<void(const json&, const KeyPath&)>& read) {
  const auto it = object.find(std::string(key));
  if (it != object.end()) read(*it, path.key(key));
}

bool is_version(std::string_view v) {
  if (v.empty() || v.size() > policy::kMaxVersionBytes) return false;
  for (size_t i = 0; i < v.size(); ++i) {
    const char c = v[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum && (i == 0 || (c != '.' && c != '+' && c != '-'))) return false;
  }
  return true;
}

bool is_env_name(std::string_view name) {
  if (name.empty() || name.size() > policy::kMaxEnvNameBytes) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!letter && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

/// Checks `entry` and returns it without "." segments, or the reason it is refused.
Result<std::string> normalize_entry(std::string_view entry) {
  if (entry.empty()) return Error{"it is empty"};
  if (entry.size() > policy::kMaxEntryBytes) {
    return Error{"longer than " + std::to_string(policy::kMaxEntryBytes) + " bytes"};
  }
  if (has_control(entry)) return Error{"control characters are not allowed"};
  if (entry.find('\\') != std::string_view::npos) return Error{"use '/' between folders, not '\\'"};
  if (entry.front() == '/') return Error{"absolute paths are not allowed"};
  std::string out;
  size_t start = 0;
  while (start <= entry.size()) {
    size_t end = entry.find('/', start);
    if (end == std::string_view::npos) end = entry.size();
    const std::string_view segment = entry.substr(start, end - start);
    if (segment.empty()) return Error{"empty path segments ('//' or a trailing '/') are not allowed"};
    if (segment == "..") return Error{"'..' is not allowed"};
    if (segment != ".") {
      if (!out.empty()) out += '/';
      out += segment;
    }
    start = end + 1;
  }
  if (out.empty()) return Error{"it names the skill folder itself, not a file"};
  return out;
}

constexpr std::string_view kIdRule = base::kSkillIdRule;

void read_id(Validator& v, const json& value, const KeyPath& path, Manifest& m) {
  if (!value.is_string() || !base::is_valid_skill_id(value.get_ref<const std::string&>())) {
    v.expected(path, kIdRule, value);
    return;
  }
  m.id = value.get<std::string>();
}

void read_name(Validator& v, const json& value, const KeyPath& path, Manifest& m) {
  const std::string what =
      "a string of 1 to " + std::to_string(policy::kMaxNameBytes) + " bytes without control characters";
  if (!value.is_string()) return v.expected(path, what, value);
  const auto& s = value.get_ref<const std::string&>();
  if (s.empty() || s.size() > policy::kMaxNameBytes || has_control(s)) return v.expected(path, what, value);
  m.name = s;
}

void read_version(Validator& v, const json& value, const KeyPath& path, Manifest& m) {
  if (!value.is_string() || !is_version(value.get_ref<const std::string&>())) {
    return v.expected(path,
                      "a version like \"1.0.0\" (1 to 64 characters from A-Z, a-z, 0-9, '.', '+' and '-', "
                      "starting with a letter or digit)",
                      value);
  }
  m.version = value.get<std::string>();
}

void read_entry(Validator& v, const json& value, const KeyPath& path, Manifest& m) {
  constexpr std::string_view what = "a relative path to a file inside the skill folder, such as \"index.js\"";
  if (!value.is_string()) return v.expected(path, what, value);
  Result<std::string> entry = normalize_entry(value.get_ref<const std::string&>());
  if (!entry) return v.expected(path, what, value, entry.error().message);
  m.entry = *entry;
}

void read_limits(Validator& v, const json& value, const KeyPath& path, Limits& limits) {
  if (!v.object(value, path, kLimitKeys)) return;
  with_key(value, path, "memory_mb", [&](const json& x, const KeyPath& p) {
    const uint64_t min_mb = (Limits::kMinMemoryBytes + kMiB - 1) / kMiB;
    if (auto n = v.integer(x, p, min_mb, Limits::kMaxMemoryBytes / kMiB)) limits.memory_bytes = *n * kMiB;
  });
  with_key(value, path, "steps", [&](const json& x, const KeyPath& p) {
    if (auto n = v.integer(x, p, 1, Limits::kMaxSteps)) limits.steps = *n;
  });
  with_key(value, path, "stack_kb", [&](const json& x, const KeyPath& p) {
    if (auto n = v.integer(x, p, Limits::kMinStackBytes / kKiB, Limits::kMaxStackBytes / kKiB)) {
      limits.stack_bytes = *n * kKiB;
    }
  });
  with_key(value, path, "timeout_ms", [&](const json& x, const KeyPath& p) {
    if (auto n = v.integer(x, p, 1, Limits::kMaxTimeoutMs)) limits.timeout_ms = *n;
  });
}

void read_fs(Validator& v, const json& value, const KeyPath& path, FsPolicy& fs) {
  if (!v.object(value, path, kFsKeys)) return;
  with_key(value, path, "mode", [&](const json& x, const KeyPath& p) {
    static constexpr std::array<std::pair<std::string_view, FsMode>, 4> kModes = {
        {{"none", FsMode::none},
         {"read", FsMode::read},
         {"write", FsMode::write},
         {"readwrite", FsMode::readwrite}}};
    if (x.is_string()) {
      for (const auto& [name, mode] : kModes) {
        if (x.get_ref<const std::string&>() == name) {
          fs.mode = mode;
          return;
        }
      }
    }
    v.expected(p, "one of \"none\", \"read\", \"write\", \"readwrite\"", x);
  });
  with_key(value, path, "quota_bytes", [&](const json& x, const KeyPath& p) {
    if (auto n = v.integer(x, p, 0, policy::kMaxFsQuotaBytes)) fs.quota_bytes = *n;
  });
  with_key(value, path, "max_files", [&](const json& x, const KeyPath& p) {
    if (auto n = v.integer(x, p, 0, policy::kMaxFsFiles)) fs.max_files = *n;
  });
  with_key(value, path, "max_file_bytes", [&](const json& x, const KeyPath& p) {
    if (auto n = v.integer(x, p, 0, policy::kMaxFsFileBytes)) fs.max_file_bytes = *n;
  });
}

void read_allow(Validator& v, const json& value, const KeyPath& path, HttpAllowList& allow) {
  if (!value.is_array()) {
    return v.expected(path, "an array of URL prefixes like [\"https://api.example.com/v1/\"]", value);
  }
  if (value.size() > policy::kMaxHttpAllowEntries) {
    return v.problem(path, "expected at most " + std::to_string(policy::kMaxHttpAllowEntries) +
                               " entries, got " + std::to_string(value.size()));
  }
  // Each entry is parsed once, by the list itself (policy/http_allow.cpp); what the list keeps is what
  // the http capability matches against.
  HttpAllowList out;
  for (size_t i = 0; i < value.size(); ++i) {
    const KeyPath p = path.index(i);
    constexpr std::string_view what = "a URL prefix \"http(s)://host[:port]/path\"";
    if (!value[i].is_string()) {
      v.expected(p, what, value[i]);
      continue;
    }
    if (std::optional<std::string> error = out.push_back(value[i].get_ref<const std::string&>())) {
      out.pop_back();
      v.expected(p, what, value[i], *error);
      continue;
    }
    const std::vector<std::string>& texts = out.texts();
    const std::string& entry = texts.back();
    const auto dup = std::find(texts.begin(), texts.end() - 1, entry);
    if (dup != texts.end() - 1) {
      const auto first = static_cast<size_t>(dup - texts.begin());
      v.problem(p, "same as allow[" + std::to_string(first) + "] (" +
                       base::quote(entry, 80, base::QuoteStyle::json) + "); list each prefix once");
      out.pop_back();
      continue;
    }
  }
  allow = std::move(out);
}

void read_methods(Validator& v, const json& value, const KeyPath& path, std::vector<std::string>& methods) {
  const std::string known = join(policy::kHttpMethods, ", ", false);
  if (!value.is_array()) return v.expected(path, "an array of methods from " + known, value);
  std::vector<std::string> out;
  for (size_t i = 0; i < value.size(); ++i) {
    const KeyPath p = path.index(i);
    const json& x = value[i];
    const bool known_method =
        x.is_string() && std::find(policy::kHttpMethods.begin(), policy::kHttpMethods.end(),
                                   x.get_ref<const std::string&>()) != policy::kHttpMethods.end();
    if (!known_method) {
      std::string why;
      if (x.is_string()) {
        std::string upper = x.get<std::string>();
        for (char& c : upper) {
          if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
        }
        if (std::find(policy::kHttpMethods.begin(), policy::kHttpMethods.end(), upper) !=
            policy::kHttpMethods.end()) {
          why = "methods are upper case";
        } else if (upper == "CONNECT" || upper == "TRACE") {
          why = "CONNECT and TRACE are never granted";
        }
      }
      v.expected(p, "one of " + known, x, why);
      continue;
    }
    if (std::find(out.begin(), out.end(), x.get_ref<const std::string&>()) != out.end()) {
      v.problem(p,
                base::quote(x.get_ref<const std::string&>(), policy::kMaxShownBytes, base::QuoteStyle::json) +
                    " is listed twice; list each method once");
      continue;
    }
    out.push_back(x.get<std::string>());
  }
  methods = std::move(out);
}

void read_http(Validator& v, const json& value, const KeyPath& path, HttpPolicy& http) {
  if (!v.object(value, path, kHttpKeys)) return;
  with_key(value, path, "allow", [&](const json& x, const KeyPath& p) { read_allow(v, x, p, http.allow); });
  with_key(value, path, "methods",
           [&](const json& x, const KeyPath& p) { read_methods(v, x, p, http.methods); });
  with_key(value, path, "max_request_bytes", [&](const json& x, const KeyPath& p) {
    if (auto n = v.integer(x, p, 0, policy::kMaxHttpRequestBytes)) http.max_request_bytes = *n;
  });
  with_key(value, path, "max_response_bytes", [&](const json& x, const KeyPath& p) {
    if (auto n = v.integer(x, p, 0, policy::kMaxHttpResponseBytes)) http.max_response_bytes = *n;
  });
  with_key(value, path, "timeout_ms", [&](const json& x, const KeyPath& p) {
    if (auto n = v.integer(x, p, 1, policy::kMaxHttpTimeoutMs)) http.timeout_ms = *n;
  });
  with_key(value, path, "max_redirects", [&](const json& x, const KeyPath& p) {
    if (auto n = v.integer(x, p, 0, policy::kMaxHttpRedirects))
      http.max_redirects = static_cast<uint32_t>(*n);
  });
  with_key(value, path, "max_concurrent", [&](const json& x, const KeyPath& p) {
    if (auto n = v.integer(x, p, 1, policy::kMaxHttpConcurrent))
      http.max_concurrent = static_cast<uint32_t>(*n);
  });
  with_key(value, path, "max_requests", [&](const json& x, const KeyPath& p) {
    if (auto n = v.integer(x, p, 0, policy::kMaxHttpRequests)) http.max_requests = static_cast<uint32_t>(*n);
  });
  with_key(value, path, "allow_private_addresses", [&](const json& x, const KeyPath& p) {
    if (auto b = v.boolean(x, p)) http.allow_private_addresses = *b;
  });
  with_key(value, path, "fetch", [&](const json& x, const KeyPath& p) {
    const auto b = v.boolean(x, p);
    if (!b) return;
    // A fetch that could reach no host is a manifest mistake, not a skill that works offline.
    if (*b && http.allow.empty())
      return v.problem(p,
                       "fetch is true but permissions.http.allow lists no URL prefix; every fetch would be "
                       "refused: add the prefixes fetch may reach, or leave fetch out");
    http.fetch = *b;
  });
}

void read_env(Validator& v, const json& value, const KeyPath& path, std::vector<std::string>& env) {
  if (!value.is_array()) {
    return v.expected(path, "an array of environment variable names like [\"API_KEY\"]", value);
  }
  if (value.size() > policy::kMaxEnvNames) {
    return v.problem(path, "expected at most " + std::to_string(policy::kMaxEnvNames) + " names, got " +
                               std::to_string(value.size()));
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < value.size(); ++i) {
    const KeyPath p = path.index(i);
    const json& x = value[i];
    if (!x.is_string() || !is_env_name(x.get_ref<const std::string&>())) {
      v.expected(
          p,
          "an environment variable name (letters, digits and '_', not starting with a digit, at most " +
              std::to_string(policy::kMaxEnvNameBytes) + " characters)",
          x);
      continue;
    }
    if (std::find(out.begin(), out.end(), x.get_ref<const std::string&>()) != out.end()) {
      v.problem(p,
                base::quote(x.get_ref<const std::string&>(), policy::kMaxShownBytes, base::QuoteStyle::json) +
                    " is listed twice; list each name once");
      continue;
    }
    out.push_back(x.get<std::string>());
  }
  env = std::move(out);
}

void read_store(Validator& v, const json& value, const KeyPath& path, StorePolicy& store) {
  if (!v.object(value, path, kStoreKeys)) return;
  with_key(value, path, "quota_bytes", [&](const json& x, const KeyPath& p) {
    if (auto n = v.integer(x, p, 0, policy::kMaxStoreQuotaBytes)) store.quota_bytes = *n;
  });
  with_key(value, path, "max_keys", [&](const json& x, const KeyPath& p) {
    if (auto n = v.integer(x, p, 0, policy::kMaxStoreKeys)) store.max_keys = *n;
  });
  with_key(value, path, "max_value_bytes", [&](const json& x, const KeyPath& p) {
    if (auto n = v.integer(x, p, 0, policy::kMaxStoreValueBytes)) store.max_value_bytes = *n;
  });
}

void read_permissions(Validator& v, const json& value, const KeyPath& path, Policy& permissions) {
  if (!v.object(value, path, kPermissionKeys)) return;
  with_key(value, path, "fs", [&](const json& x, const KeyPath& p) { read_fs(v, x, p, permissions.fs); });
  with_key(value, path, "http",
           [&](const json& x, const KeyPath& p) { read_http(v, x, p, permissions.http); });
  with_key(value, path, "env", [&](const json& x, const KeyPath& p) { read_env(v, x, p, permissions.env); });
  with_key(value, path, "store",
           [&](const json& x, const KeyPath& p) { read_store(v, x, p, permissions.store); });
}

bool is_tool_name(std::string_view name) {
  if (name.empty() || name.size() > policy::kMaxToolNameBytes) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
}

/// An export name as a run looks it up: "default" or a JavaScript identifier of ASCII letters, digits,
/// '_' and '$'.
bool is_export_name(std::string_view name) {
  if (name.empty() || name.size() > policy::kMaxExportNameBytes) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool start = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == '$';
    if (!start && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

/// Reads a tool's input or output schema: a draft 7 schema (checked against the meta-schema and
/// compiled, as `skillbox mcp` will) whose "type" is "object" (MCP: arguments and structured results
/// are objects). Returns its JSON text.
std::optional<std::string> read_tool_schema(Validator& v, const json& value, const KeyPath& path,
                                            std::string_view why_object) {
  if (!value.is_object()) {
    v.expected(path, "a JSON Schema object such as {\"type\": \"object\", \"properties\": {...}}", value);
    return std::nullopt;
  }
  const auto type = value.find("type");
  if (type == value.end() || !type->is_string() || type->get_ref<const std::string&>() != "object") {
    v.problem(path.key("type"), "expected \"object\", got " +
                                    (type == value.end() ? std::string("nothing") : describe_json(*type)) +
                                    " (" + std::string(why_object) + ")");
    return std::nullopt;
  }
  Result<base::JsonSchema> compiled = base::JsonSchema::compile(value);
  if (!compiled) {
    v.problem(path, "not a valid JSON Schema (draft 7): " + compiled.error().message);
    return std::nullopt;
  }
  return value.dump();
}

void read_tool_annotations(Validator& v, const json& value, const KeyPath& path, ToolDeclaration& tool) {
  json rest = value;  // without the derived hints, which get their own message
  if (value.is_object()) {
    for (const std::string_view derived : kDerivedAnnotationKeys) {
      if (!value.contains(std::string(derived))) continue;
      rest.erase(std::string(derived));
      v.problem(path.key(derived),
                "a skill cannot claim this annotation: skillbox derives readOnlyHint, destructiveHint and "
                "openWorldHint from permissions (fs mode, http methods and allow), so that a client can "
                "trust them; remove it (only title and idempotent_hint may be declared)");
    }
  }
  if (!v.object(rest, path, kToolAnnotationKeys)) return;
  with_key(value, path, "title", [&](const json& x, const KeyPath& p) {
    const std::string what =
        "a string of 1 to " + std::to_string(policy::kMaxNameBytes) + " bytes without control characters";
    if (!x.is_string() || x.get_ref<const std::string&>().empty() ||
        x.get_ref<const std::string&>().size() > policy::kMaxNameBytes ||
        has_control(x.get_ref<const std::string&>()))
      return v.expected(p, what, x);
    tool.annotation_title = x.get<std::string>();
  });
  with_key(value, path, "idempotent_hint", [&](const json& x, const KeyPath& p) {
    if (auto b = v.boolean(x, p)) tool.idempotent_hint = *b;
  });
}

void read_tool(Validator& v, const json& value, const KeyPath& path, ToolDeclaration& tool) {
  if (!v.object(value, path, kToolKeys)) return;
  if (value.contains("name")) {
    const json& x = value["name"];
    if (!x.is_string() || !is_tool_name(x.get_ref<const std::string&>())) {
      v.expected(
          path.key("name"),
          "1 to " + std::to_string(policy::kMaxToolNameBytes) +
              " characters from A-Z, a-z, 0-9, '_', '-' and '.' (MCP's tool-name rule; the served name "
              "is <id>__<name>, at most 128)",
          x);
    } else {
      tool.name = x.get<std::string>();
    }
  } else {
    v.missing(path.key("name"), "\"name\": the tool's name, such as \"forecast\"");
  }
  if (value.contains("export")) {
    const json& x = value["export"];
    if (!x.is_string() || !is_export_name(x.get_ref<const std::string&>())) {
      v.expected(path.key("export"),
                 "the name of one of the skill's exports: \"default\" or an identifier such as \"forecast\"",
                 x);
    } else {
      tool.export_name = x.get<std::string>();
    }
  } else {
    v.missing(path.key("export"), "\"export\": the export a call runs, such as \"default\"");
  }
  if (value.contains("description")) {
    const json& x = value["description"];
    if (!x.is_string() || x.get_ref<const std::string&>().empty() ||
        x.get_ref<const std::string&>().size() > policy::kMaxToolDescriptionBytes) {
      v.expected(path.key("description"),
                 "a string of 1 to " + std::to_string(policy::kMaxToolDescriptionBytes) + " bytes", x);
    } else {
      tool.description = x.get<std::string>();
    }
  } else {
    v.missing(path.key("description"), "\"description\": what the tool does, for the model that picks it");
  }
  with_key(value, path, "title", [&](const json& x, const KeyPath& p) {
    const std::string what =
        "a string of 1 to " + std::to_string(policy::kMaxNameBytes) + " bytes without control characters";
    if (!x.is_string() || x.get_ref<const std::string&>().empty() ||
        x.get_ref<const std::string&>().size() > policy::kMaxNameBytes ||
        has_control(x.get_ref<const std::string&>()))
      return v.expected(p, what, x);
    tool.title = x.get<std::string>();
  });
  if (value.contains("input_schema")) {
    if (auto text = read_tool_schema(v, value["input_schema"], path.key("input_schema"),
                                     "MCP tool arguments are always a JSON object"))
      tool.input_schema_json = *text;
  } else {
    v.missing(path.key("input_schema"),
              "\"input_schema\": a JSON Schema of the arguments, at least {\"type\": \"object\"}");
  }
  with_key(value, path, "output_schema", [&](const json& x, const KeyPath& p) {
    if (auto text =
            read_tool_schema(v, x, p, "MCP structuredContent is a JSON object: the export must return one"))
      tool.output_schema_json = *text;
  });
  with_key(value, path, "annotations",
           [&](const json& x, const KeyPath& p) { read_tool_annotations(v, x, p, tool); });
}

void read_tools(Validator& v, const json& value, const KeyPath& path, std::vector<ToolDeclaration>& tools) {
  if (!value.is_array() || value.empty()) {
    return v.expected(path,
                      "a non-empty array of tools like [{\"name\": \"forecast\", \"export\": \"forecast\", "
                      "\"description\": \"...\", \"input_schema\": {\"type\": \"object\"}}]",
                      value);
  }
  if (value.size() > policy::kMaxTools) {
    return v.problem(path, "expected at most " + std::to_string(policy::kMaxTools) + " tools, got " +
                               std::to_string(value.size()) + "; split the skill");
  }
  std::vector<ToolDeclaration> out;
  for (size_t i = 0; i < value.size(); ++i) {
    const KeyPath p = path.index(i);
    ToolDeclaration tool;
    read_tool(v, value[i], p, tool);
    if (!tool.name.empty()) {
      const auto same =
          std::find_if(out.begin(), out.end(), [&](const ToolDeclaration& t) { return t.name == tool.name; });
      if (same != out.end()) {
        v.problem(p.key("name"), "\"" + tool.name + "\" is the name of tools[" +
                                     std::to_string(static_cast<size_t>(same - out.begin())) +
                                     "] too; name each tool once");
        continue;
      }
    }
    out.push_back(std::move(tool));
  }
  tools = std::move(out);
}

}  // namespace

Result<Manifest> Skill::parse_manifest(std::string_view json_text) {
  if (json_text.size() > policy::kMaxManifestBytes) {
    return Error{policy::manifest_too_large_error()};
  }
  if (const auto bad = base::utf8::find_invalid(json_text)) {
    return Error{std::string(kDoc) + ": not valid UTF-8 at byte " + std::to_string(*bad) +
                 "; save the file as UTF-8"};
  }
  Result<json> doc = policy::parse_strict_json(json_text, kDoc);
  if (!doc) return doc.error();

  Validator v;
  Manifest m;
  const KeyPath root;
  if (!v.object(*doc, root, kTopKeys)) return Error{v.message()};
  const json& top = *doc;

  if (top.contains("id")) {
    read_id(v, top["id"], root.key("id"), m);
  } else {
    v.missing(root.key("id"), "\"id\": a short name such as \"weather\" (" + std::string(kIdRule) + ")");
  }
  with_key(top, root, "name", [&](const json& x, const KeyPath& p) { read_name(v, x, p, m); });
  with_key(top, root, "version", [&](const json& x, const KeyPath& p) { read_version(v, x, p, m); });
  if (top.contains("entry")) {
    read_entry(v, top["entry"], root.key("entry"), m);
  } else {
    v.missing(root.key("entry"), "\"entry\": the skill's main file, such as \"index.js\"");
  }
  with_key(top, root, "$schema", [&](const json& x, const KeyPath& p) {
    if (!x.is_string()) v.expected(p, "a string (the URL or path of a JSON Schema, for editors)", x);
  });
  with_key(top, root, "limits", [&](const json& x, const KeyPath& p) { read_limits(v, x, p, m.limits); });
  with_key(top, root, "permissions",
           [&](const json& x, const KeyPath& p) { read_permissions(v, x, p, m.permissions); });
  with_key(top, root, "tools", [&](const json& x, const KeyPath& p) { read_tools(v, x, p, m.tools); });

  if (!v.ok()) return Error{v.message()};
  if (m.name.empty()) m.name = m.id;
  if (m.version.empty()) m.version = "0.0.0";
  return m;
}

}  // namespace skillbox
