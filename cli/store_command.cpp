// cli/store_command.cpp — `skillbox store list|get|set|delete|export|import|usage|skills|check`.
//
// Everything goes through skillbox/store.h, the same code the store capability uses, so operators get
// exactly the key rules, JSON checks, quotas and transactions that skills get. Reads never create a
// database; writes create it like a first skill run would.
#include "cli/store_command.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "base/escape.h"
#include "base/json_text.h"
#include "cli/options.h"
#include "cli/output.h"
#include "skillbox/skillbox.h"
#include "skillbox/store.h"

namespace skillbox::cli {
namespace {

constexpr int kExitMissing = 1;  // no such key; a quota would be exceeded
constexpr int kExitDatabase = 70;

struct StoreOptions {
  std::string data_dir;
  std::string skill;
  std::string skill_dir;  // --skill-dir: the id and the quotas come from this folder's manifest
  std::string key;
  std::string value;
  std::string prefix;
  std::string file;
  std::string output;
  bool replace = false;
  StorePolicy policy;
  // Which of the quota flags were given (set by the parser): the source a refusal names.
  bool quota_bytes_flag = false;
  bool max_keys_flag = false;
  bool max_value_bytes_flag = false;
};

/// The skill a writing command works on, and where each of its quotas comes from.
struct QuotaSource {
  std::string skill;
  StorePolicy policy;
  std::string manifest;          // DIR/skill.json with --skill-dir, else ""
  nlohmann::json store_section;  // permissions.store of that file as written (null when absent)
};

class ImportProgress;
/// The progress line on stderr while `store import` runs, if any: complain() finishes it first.
ImportProgress* active_progress = nullptr;
void end_progress();

/// Prints "skillbox: store NAME: MESSAGE" on stderr (escaped: keys and values are skill data), on a line
/// of its own. The store is keyed by skill id, which the messages name; with --skill-dir they name
/// the manifest too.
void complain(std::string_view command, std::string_view text) {
  end_progress();
  say("", "store " + std::string(command) + ": " + base::escape_text(text));
}

int exit_for(StoreErrc code) {
  switch (code) {
    case StoreErrc::invalid_argument:
      return kExitUsage;
    case StoreErrc::quota_exceeded:
      return kExitMissing;
    case StoreErrc::corrupt:
    case StoreErrc::newer_schema:
    case StoreErrc::busy:
    case StoreErrc::io_error:
      return kExitDatabase;
  }
  return kExitDatabase;
}

// Object members keep their order, as they would in the skill (nlohmann::json would sort them).
using Json = nlohmann::ordered_json;

/// `json_text` (valid JSON) re-serialised compactly: one line, no insignificant whitespace, as
/// JSON.stringify writes it, so a value stored by an operator costs what the same value stored by a
/// skill costs and prints on one line.
std::string compact(std::string_view json_text) {
  return base::json_text::reformat(json_text);  // no tree: any depth, lone-surrogate escapes kept
}

/// JSON text of a string, with terminal-dangerous characters escaped (still the same JSON value).
std::string json_string(const std::string& s) {
  // Invalid UTF-8 (possible only in an operator's argv or a tampered file) is shown as U+FFFD.
  return base::escape_json_text(
      nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

class Session {
 public:
  Session(std::string command, const StoreOptions& o) : command_(std::move(command)), o_(o) {
    HostOptions host;
    host.data_dir = o.data_dir;
    file_ = StoreDatabase::path_in(resolve_data_dir(host));
  }

  /// Opens the database. With `create` false a missing file is reported as absent (nullopt, no
  /// error): reads never create one.
  bool open(bool create) {
    std::error_code ec;
    if (!create && !std::filesystem::exists(file_, ec)) return true;
    StoreOpenOptions options;
    options.create = create;
    auto db = StoreDatabase::open(file_, options);
    if (!db) return fail_db(db.error());
    db_.emplace(std::move(*db));
    return true;
  }

  [[nodiscard]] bool exists() const { return db_.has_value(); }
  [[nodiscard]] const std::filesystem::path& file() const { return file_; }
  StoreDatabase& db() { return *db_; }

  /// The --skill view; reports a bad id.
  std::optional<SkillStore> skill() {
    auto s = db_->skill(o_.skill, o_.policy);
    if (!s) {
      fail(s.error());
      return std::nullopt;
    }
    return std::move(*s);
  }

  /// Reports a store error and sets the exit code.
  bool fail(const StoreError& e) {
    if (e.code == StoreErrc::invalid_argument || e.code == StoreErrc::quota_exceeded) {
      complain(command_, e.message);
    } else {
      complain(command_, file_.string() + ": " + e.message);
    }
    exit_code = exit_for(e.code);
    return false;
  }
  bool fail_db(const StoreError& e) {
    complain(command_, file_.string() + ": " + e.message);
    exit_code = exit_for(e.code);
    return false;
  }

  int exit_code = 0;

 private:
  std::string command_;
  const StoreOptions& o_;
  std::filesystem::path file_;
  std::optional<StoreDatabase> db_;
};

/// Checks --skill before the database is opened, so a typo never creates a store file.
bool skill_id_ok(const std::string& command, const StoreOptions& o, int& exit_code) {
  if (auto e = StoreDatabase::check_skill_id(o.skill)) {
    complain(command, "--skill: " + e->message);
    exit_code = kExitUsage;
    return false;
  }
  return true;
}

/// The skill id and quotas of `set`, `import` and `usage`: from --skill-dir's manifest when given (and
/// --skill, if also given, must name the same id), else --skill with the default quotas or the quota
/// flags. Reports a problem (exit 2) before any database is opened.
std::optional<QuotaSource> quota_source(const std::string& command, StoreOptions& o, int& exit_code) {
  QuotaSource q;
  q.policy = o.policy;
  if (o.skill_dir.empty()) {
    if (o.skill.empty()) {
      complain(command, "give the skill: --skill ID, or --skill-dir DIR to use the quotas of its skill.json");
      exit_code = kExitUsage;
      return std::nullopt;
    }
    if (!skill_id_ok(command, o, exit_code)) return std::nullopt;
    q.skill = o.skill;
    return q;
  }
  Result<Skill> skill = load_skill(o.skill_dir);
  if (!skill) {
    complain(command, "--skill-dir: " + skill.error().message);
    exit_code = kExitUsage;
    return std::nullopt;
  }
  const std::string& id = skill->manifest().id;
  const std::filesystem::path manifest = skill->dir() / "skill.json";
  if (!o.skill.empty() && o.skill != id) {
    complain(command, "--skill " + o.skill + " is not the skill in --skill-dir " + o.skill_dir +
                          ", whose id is " + id + "; leave out --skill, or give the folder of skill " +
                          o.skill);
    exit_code = kExitUsage;
    return std::nullopt;
  }
  // The quotas are only the folder's to give when it owns the id (docs/manifest.md "Identity"): a
  // folder that merely claims the id must not lend another skill its own, larger quotas.
  HostOptions host;
  host.data_dir = o.data_dir;
  if (auto bindings = skill_bindings(host)) {
    std::error_code ec;
    const std::filesystem::path mine = std::filesystem::canonical(skill->dir(), ec);
    for (const SkillBinding& b : *bindings) {
      if (b.id != id || b.dir.empty() || b.dir == mine) continue;
      complain(command, "--skill-dir " + o.skill_dir + ": skill " + id + " belongs to the folder " +
                            b.dir.string() + ", not this one; give that folder, or make this one the owner " +
                            "first: skillbox skills rebind " + o.skill_dir);
      exit_code = kExitUsage;
      return std::nullopt;
    }
  } else {
    complain(command, bindings.error().message);
    exit_code = kExitInternal;
    return std::nullopt;
  }
  q.skill = id;
  q.policy = skill->manifest().permissions.store;
  q.manifest = manifest.string();
  // Which quota keys the file sets itself, for the message of a refusal (an OpenHuman bundle's
  // skill.json is optional: without one, every quota is the default).
  std::ifstream in(manifest, std::ios::binary);
  if (in) {
    std::ostringstream text;
    text << in.rdbuf();
    const nlohmann::json j = base::json_text::parse(text.str());
    if (j.is_object() && j.contains("permissions") && j["permissions"].is_object() &&
        j["permissions"].contains("store"))
      q.store_section = j["permissions"]["store"];
  }
  o.skill = id;
  o.policy = q.policy;
  return q;
}

/// Where the limit `key` (quota_bytes, max_keys, max_value_bytes) of `q` was set, for a refusal.
std::string limit_source(const QuotaSource& q, const StoreOptions& o, const std::string& key) {
  const std::string name = "permissions.store." + key;
  if (!q.manifest.empty()) {
    if (q.store_section.is_object() && q.store_section.contains(key)) return name + " in " + q.manifest;
    return "the default of " + name + ", which " + q.manifest + " does not set";
  }
  const bool flag = key == "quota_bytes" ? o.quota_bytes_flag
                    : key == "max_keys"  ? o.max_keys_flag
                                         : o.max_value_bytes_flag;
  std::string option = "--" + key;
  for (char& c : option)
    if (c == '_') c = '-';
  if (flag) return option + " on the command line";
  return "the default of " + name + " (no --skill-dir: give the skill's folder to use its skill.json, or " +
         option + " N)";
}

/// A quota refusal of the store, with where the limit came from appended. The store's messages name
/// the manifest key of the count and byte quotas; a value over max_value_bytes says "store value is".
StoreError with_source(StoreError e, const QuotaSource& q, const StoreOptions& o) {
  if (e.code != StoreErrc::quota_exceeded) return e;
  std::string key;
  if (e.message.find("permissions.store.max_keys") != std::string::npos) {
    key = "max_keys";
  } else if (e.message.find("permissions.store.quota_bytes") != std::string::npos) {
    key = "quota_bytes";
  } else if (e.message.find("store value is") != std::string::npos) {
    key = "max_value_bytes";
  } else {
    return e;  // the key length: fixed, not a manifest quota
  }
  e.message += "; the limit is " + limit_source(q, o, key);
  return e;
}

int run_list(const StoreOptions& o) {
  Session s("list", o);
  if (!s.open(false)) return s.exit_code;
  // Nothing to list is not an error, but stdout stays empty, so stderr says where the store was looked
  // for: the usual cause is another data folder (--data-dir, $SKILLBOX_HOME).
  const auto none = [&](const std::string& why) {
    complain("list",
             "no keys" + std::string(o.prefix.empty() ? "" : " starting with " + json_string(o.prefix)) +
                 " for skill \"" + o.skill + "\": " + why +
                 " (the data folder is --data-dir, else $SKILLBOX_HOME, else $XDG_DATA_HOME/skillbox or "
                 "~/.local/share/skillbox)");
    return 0;
  };
  if (!s.exists()) return none(s.file().string() + " does not exist");
  auto skill = s.skill();
  if (!skill) return s.exit_code;
  auto keys = skill->keys(o.prefix);
  if (!keys) return s.fail(keys.error()), s.exit_code;
  if (keys->empty()) return none("looked in " + s.file().string());
  std::string out;
  for (const std::string& k : *keys) out += json_string(k) + "\n";
  emit(stdout, out);
  return 0;
}

int run_get(const StoreOptions& o) {
  Session s("get", o);
  if (!s.open(false)) return s.exit_code;
  std::optional<std::string> value;
  if (s.exists()) {
    auto skill = s.skill();
    if (!skill) return s.exit_code;
    auto v = skill->get(o.key);
    if (!v) return s.fail(v.error()), s.exit_code;
    value = std::move(*v);
  }
  if (!value) {
    complain("get", "skill \"" + o.skill + "\" has no key " + json_string(o.key));
    return kExitMissing;
  }
  // Re-serialised compactly (the stored text may hold newlines from an operator's `set`), then escaped.
  emit(stdout, base::escape_json_text(compact(*value)) + "\n");
  return 0;
}

int run_set(const StoreOptions& o) {
  if (!base::json_text::check(o.value).ok()) {
    complain("set",
             "VALUE must be JSON text, e.g. 42, true, '\"text\"' (with the double quotes) or '{\"a\": 1}'");
    return kExitUsage;
  }
  int code = 0;
  StoreOptions resolved = o;
  const std::optional<QuotaSource> quotas = quota_source("set", resolved, code);
  if (!quotas) return code;
  Session s("set", resolved);
  if (!s.open(true)) return s.exit_code;
  auto skill = s.skill();
  if (!skill) return s.exit_code;
  auto r = skill->set(o.key, compact(o.value));
  if (!r) return s.fail(with_source(r.error(), *quotas, resolved)), s.exit_code;
  return 0;
}

int run_delete(const StoreOptions& o) {
  Session s("delete", o);
  if (!s.open(false)) return s.exit_code;
  bool existed = false;
  if (s.exists()) {
    auto skill = s.skill();
    if (!skill) return s.exit_code;
    auto r = skill->remove(o.key);
    if (!r) return s.fail(r.error()), s.exit_code;
    existed = *r;
  }
  if (!existed) {
    complain("delete", "skill \"" + o.skill + "\" has no key " + json_string(o.key));
    return kExitMissing;
  }
  return 0;
}

int run_export(const StoreOptions& o) {
  Session s("export", o);
  if (!s.open(false)) return s.exit_code;
  std::vector<StoreEntry> entries;
  if (s.exists()) {
    auto skill = s.skill();
    if (!skill) return s.exit_code;
    auto e = skill->entries();
    if (!e) return s.fail(e.error()), s.exit_code;
    entries = std::move(*e);
  }
  std::string out;
  for (const StoreEntry& e : entries) {
    // Re-serialised compactly: one entry per line whatever whitespace the stored text had.
    const std::string value = compact(e.value_json);
    out += base::escape_json_text("{\"key\":" + json_string(e.key) + ",\"value\":" + value + "}") + "\n";
  }
  if (o.output.empty()) {
    emit(stdout, out);  // main() turns a failed stdout into exit code 70
    return 0;
  }
  std::ofstream file(o.output, std::ios::binary | std::ios::trunc);
  file.write(out.data(), static_cast<std::streamsize>(out.size()));
  file.close();
  if (!file) {
    complain("export", o.output + ": cannot write the file");
    return kExitDatabase;
  }
  return 0;
}

/// "12,345": `n` with a comma between groups of three digits.
std::string grouped(size_t n) {
  std::string digits = std::to_string(n);
  for (size_t at = digits.size(); at > 3; at -= 3) digits.insert(at - 3, ",");
  return digits;
}

/// The progress of `store import` on stderr, "importing: 1,200 lines" rewritten in place at most ten times
/// a second, when stderr is a terminal. Nothing at all otherwise: a pipe, a file or a test sees no
/// progress text. end() (or the destructor) finishes the line, so a message printed next starts on a
/// line of its own.
class ImportProgress {
 public:
  ImportProgress() : enabled_(::isatty(STDERR_FILENO) == 1) { active_progress = this; }
  ImportProgress(const ImportProgress&) = delete;
  ImportProgress& operator=(const ImportProgress&) = delete;
  ~ImportProgress() {
    end();
    active_progress = nullptr;
  }

  /// `lines` lines read so far; drawn when the last drawing is 100 ms old (and for the first line).
  void lines(size_t lines) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (drawn_ && now - last_ < std::chrono::milliseconds(100)) return;
    draw("importing: " + count(lines));
    last_ = now;
  }
  /// Replaces the line with `text` at once (a phase change, or the final state before end()).
  void show(const std::string& text) {
    if (enabled_) draw(text);
  }
  void end() {
    if (enabled_ && drawn_) emit(stderr, "\n");
    drawn_ = false;
    enabled_ = false;
  }

  static std::string count(size_t lines) { return grouped(lines) + (lines == 1 ? " line" : " lines"); }

 private:
  void draw(const std::string& text) {
    emit(stderr, "\r" + text + "\x1b[K");  // erase what a longer earlier text left on the line
    drawn_ = true;
  }

  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_;
};

void end_progress() {
  if (active_progress != nullptr) active_progress->end();
}

/// Parses JSON lines into entries. Every line is one object {"key": string, "value": any JSON}.
std::optional<std::vector<StoreEntry>> parse_import(const std::string& where, const std::string& text,
                                                    ImportProgress& progress) {
  std::vector<StoreEntry> entries;
  size_t start = 0;
  size_t line = 0;
  while (start < text.size()) {
    ++line;
    progress.lines(line);
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view row(text.data() + start, end - start);
    if (!row.empty() && row.back() == '\r') row.remove_suffix(1);
    start = end + 1;
    auto bad = [&](const std::string& what) {
      std::string message = where;
      message += ": line " + std::to_string(line) + ": ";
      message += what;
      complain("import", message);
      return std::nullopt;
    };
    if (row.empty()) return bad("empty line; every line must be {\"key\": ..., \"value\": ...}");
    // A tree of the line: the value may be nested as deep as the store allows, plus this object.
    Json j = base::json_text::parse_ordered(row, base::json_text::kMaxDepth + 1);
    if (j.is_discarded())
      return bad(base::json_text::check(row).kind == base::json_text::Kind::too_deep
                     ? "nested deeper than " + std::to_string(base::json_text::kMaxDepth) +
                           " levels of arrays and objects (the store holds no deeper value)"
                     : std::string("not valid JSON"));
    if (!j.is_object()) return bad("expected an object {\"key\": ..., \"value\": ...}");
    for (const auto& [name, member] : j.items()) {
      if (name != "key" && name != "value") return bad("unexpected member " + json_string(name));
    }
    if (!j.contains("key") || !j["key"].is_string()) return bad("\"key\" must be a string");
    if (!j.contains("value")) return bad("\"value\" is missing");
    entries.push_back({j["key"].get<std::string>(), base::json_text::write(j["value"])});
  }
  return entries;
}

int run_import(const StoreOptions& o) {
  std::string text;
  std::string where = o.file;
  if (o.file == "-") {
    where = "stdin";
    std::ostringstream in;
    in << std::cin.rdbuf();
    text = in.str();
  } else {
    std::ifstream in(o.file, std::ios::binary);
    if (!in) {
      complain("import", o.file + ": cannot open the file");
      return kExitUsage;
    }
    std::ostringstream buf;
    buf << in.rdbuf();
    text = buf.str();
  }
  int code = 0;
  StoreOptions resolved = o;
  const std::optional<QuotaSource> quotas = quota_source("import", resolved, code);
  if (!quotas) return code;
  ImportProgress progress;
  auto entries = parse_import(where, text, progress);
  if (!entries) return kExitUsage;
  const std::string lines = ImportProgress::count(entries->size());
  progress.show("importing: " + lines + ", writing");
  Session s("import", resolved);
  if (!s.open(true)) return s.exit_code;
  auto skill = s.skill();
  if (!skill) return s.exit_code;
  auto usage = skill->import(*entries, o.replace ? StoreImportMode::replace : StoreImportMode::merge);
  if (!usage) {
    StoreError e = with_source(usage.error(), *quotas, resolved);
    // The store numbers entries from 1; with no blank lines allowed, entry N is line N.
    if (e.message.rfind("entry ", 0) == 0) e.message = where + ": line " + e.message.substr(6);
    return s.fail(e), s.exit_code;
  }
  progress.show("importing: " + lines + ", done");
  progress.end();
  emit(stdout, "imported " + std::to_string(entries->size()) + " entries into skill " + resolved.skill +
                   ": now " + std::to_string(usage->keys) + " keys, " + std::to_string(usage->bytes) +
                   " bytes\n");
  return 0;
}

int run_usage(const StoreOptions& options) {
  int code = 0;
  StoreOptions o = options;
  if (!quota_source("usage", o, code)) return code;
  Session s("usage", o);
  if (!s.open(false)) return s.exit_code;
  StoreUsage u;
  if (s.exists()) {
    auto skill = s.skill();
    if (!skill) return s.exit_code;
    auto r = skill->usage();
    if (!r) return s.fail(r.error()), s.exit_code;
    u = *r;
  }
  emit(stdout, "keys  " + std::to_string(u.keys) + " of " + std::to_string(o.policy.max_keys) + "\nbytes " +
                   std::to_string(u.bytes) + " of " + std::to_string(o.policy.quota_bytes) +
                   " (keys + values + " + std::to_string(kStoreEntryOverheadBytes) + " per entry)\n");
  return 0;
}

int run_skills(const StoreOptions& o) {
  Session s("skills", o);
  if (!s.open(false)) return s.exit_code;
  if (!s.exists()) return 0;
  auto ids = s.db().skills();
  if (!ids) return s.fail_db(ids.error()), s.exit_code;
  std::string out;
  for (const std::string& id : *ids) out += base::escape_text(id) + "\n";
  emit(stdout, out);
  return 0;
}

int run_check(const StoreOptions& o) {
  Session s("check", o);
  if (!s.open(false)) return s.exit_code;
  if (!s.exists()) {
    emit(stdout, "no store database yet: nothing to check\n");
    return 0;
  }
  auto r = s.db().check();
  if (!r) return s.fail_db(r.error()), s.exit_code;
  auto info = s.db().info();
  if (!info) return s.fail_db(info.error()), s.exit_code;
  emit(stdout, "ok: schema version " + std::to_string(info->schema_version) + ", journal mode " +
                   info->journal_mode + "\n");
  return 0;
}

}  // namespace

void add_store_command(CLI::App& app, CommandStatus& status) {
  auto o = std::make_shared<StoreOptions>();
  CLI::App* store =
      app.add_subcommand("store", "Inspect and edit the per-skill store (store.md in the guides).");
  store->require_subcommand(1);
  store->footer(
      "Exit codes: 0 done, 1 no such key or a quota would be exceeded, 2 bad input, 70 the database is "
      "damaged, newer, busy or unwritable.");

  auto common = [&](CLI::App* sub, bool needs_skill) {
    add_data_dir_option(*sub, o->data_dir);
    if (needs_skill)
      sub->add_option("--skill", o->skill, "Skill id whose entries to use")->required()->type_name("ID");
  };
  // set, import, usage: the skill by id (default quotas, or the quota flags) or by folder (its quotas).
  auto limits = [&](CLI::App* sub) {
    add_data_dir_option(*sub, o->data_dir);
    sub->add_option("--skill", o->skill, "Skill id whose entries to use (or give --skill-dir)")
        ->type_name("ID");
    CLI::Option* dir =
        sub->add_option("--skill-dir", o->skill_dir,
                        "The skill's folder: its id, and the quotas of permissions.store in its "
                        "skill.json (without it: the default quotas, or the flags below)")
            ->type_name("DIR");
    CLI::Option* bytes = sub->add_option("--quota-bytes", o->policy.quota_bytes,
                                         "Byte quota to enforce instead of the default (1 MiB)")
                             ->type_name("N")
                             ->each([o](const std::string&) { o->quota_bytes_flag = true; });
    CLI::Option* keys = sub->add_option("--max-keys", o->policy.max_keys,
                                        "Key quota to enforce instead of the default (10000)")
                            ->type_name("N")
                            ->each([o](const std::string&) { o->max_keys_flag = true; });
    CLI::Option* value =
        sub->add_option("--max-value-bytes", o->policy.max_value_bytes,
                        "Largest value to accept, JSON bytes, instead of the default (1 MiB)")
            ->type_name("N")
            ->each([o](const std::string&) { o->max_value_bytes_flag = true; });
    for (CLI::Option* flag : {bytes, keys, value}) {
      dir->excludes(flag);
      flag->excludes(dir);
    }
  };
  auto run = [o, &status](int (*fn)(const StoreOptions&)) {
    return [o, &status, fn] { status.exit_code = fn(*o); };
  };

  CLI::App* list = store->add_subcommand("list", "Print a skill's keys, one JSON string per line, sorted");
  common(list, true);
  list->add_option("--prefix", o->prefix, "Only keys starting with this")->type_name("P");
  list->callback(run(run_list));

  CLI::App* get = store->add_subcommand("get", "Print the value of a key as JSON");
  common(get, true);
  get->add_option("KEY", o->key, "Key")->required()->type_name("");
  get->callback(run(run_get));

  CLI::App* set = store->add_subcommand("set", "Store a JSON value under a key");
  limits(set);
  set->add_option("KEY", o->key, "Key")->required()->type_name("");
  set->add_option("VALUE", o->value, "JSON text: 42, true, '\"text\"', '{\"a\":1}'")
      ->required()
      ->type_name("");
  set->callback(run(run_set));

  CLI::App* del = store->add_subcommand("delete", "Delete a key");
  common(del, true);
  del->add_option("KEY", o->key, "Key")->required()->type_name("");
  del->callback(run(run_delete));

  CLI::App* exp =
      store->add_subcommand("export", "Print a skill's entries as JSON lines {\"key\", \"value\"}");
  common(exp, true);
  exp->add_option("--output,-o", o->output, "Write to this file instead of stdout")->type_name("FILE");
  exp->callback(run(run_export));

  CLI::App* imp = store->add_subcommand(
      "import", "Apply JSON lines {\"key\", \"value\"} all-or-nothing: every line is checked first");
  limits(imp);
  imp->add_option("FILE", o->file, "JSON lines file, or - for stdin")->required()->type_name("");
  imp->add_flag("--replace", o->replace,
                "Delete the skill's other keys: afterwards it holds exactly the file's");
  imp->callback(run(run_import));

  CLI::App* usage = store->add_subcommand("usage", "Print a skill's key count and bytes against the quota");
  limits(usage);
  usage->callback(run(run_usage));

  CLI::App* skills = store->add_subcommand("skills", "Print the ids of skills that have entries");
  common(skills, false);
  skills->callback(run(run_skills));

  CLI::App* check = store->add_subcommand(
      "check", "Check the whole database file (integrity, usage counters, JSON values); slow on big stores");
  common(check, false);
  check->callback(run(run_check));
}

}  // namespace skillbox::cli
