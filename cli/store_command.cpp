// cli/store_command.cpp — `skillbox store list|get|set|delete|export|import|usage|skills|check`.
//
// Everything goes through skillbox/store.h, the same code the store capability uses, so operators get
// exactly the key rules, JSON checks, quotas and transactions that skills get. Reads never create a
// database; writes create it like a first skill run would.
#include "cli/store_command.h"

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
  std::string key;
  std::string value;
  std::string prefix;
  std::string file;
  std::string output;
  bool replace = false;
  StorePolicy policy;
};

/// Prints "skillbox: store NAME: MESSAGE" on stderr (escaped: keys and values are skill data). The store
/// is keyed by skill id, which the messages name; there is no skill folder to name.
void complain(std::string_view command, std::string_view text) {
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
  return Json::parse(json_text).dump();
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

int run_list(const StoreOptions& o) {
  Session s("list", o);
  if (!s.open(false)) return s.exit_code;
  if (!s.exists()) return 0;
  auto skill = s.skill();
  if (!skill) return s.exit_code;
  auto keys = skill->keys(o.prefix);
  if (!keys) return s.fail(keys.error()), s.exit_code;
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
  if (!nlohmann::json::accept(o.value)) {
    complain("set",
             "VALUE must be JSON text, e.g. 42, true, '\"text\"' (with the double quotes) or '{\"a\": 1}'");
    return kExitUsage;
  }
  int code = 0;
  if (!skill_id_ok("set", o, code)) return code;
  Session s("set", o);
  if (!s.open(true)) return s.exit_code;
  auto skill = s.skill();
  if (!skill) return s.exit_code;
  auto r = skill->set(o.key, compact(o.value));
  if (!r) return s.fail(r.error()), s.exit_code;
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

/// Parses JSON lines into entries. Every line is one object {"key": string, "value": any JSON}.
std::optional<std::vector<StoreEntry>> parse_import(const std::string& where, const std::string& text) {
  std::vector<StoreEntry> entries;
  size_t start = 0;
  size_t line = 0;
  while (start < text.size()) {
    ++line;
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
    Json j = Json::parse(row, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return bad("not valid JSON");
    if (!j.is_object()) return bad("expected an object {\"key\": ..., \"value\": ...}");
    for (const auto& [name, member] : j.items()) {
      if (name != "key" && name != "value") return bad("unexpected member " + json_string(name));
    }
    if (!j.contains("key") || !j["key"].is_string()) return bad("\"key\" must be a string");
    if (!j.contains("value")) return bad("\"value\" is missing");
    entries.push_back({j["key"].get<std::string>(), j["value"].dump()});
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
  auto entries = parse_import(where, text);
  if (!entries) return kExitUsage;
  int code = 0;
  if (!skill_id_ok("import", o, code)) return code;
  Session s("import", o);
  if (!s.open(true)) return s.exit_code;
  auto skill = s.skill();
  if (!skill) return s.exit_code;
  auto usage = skill->import(*entries, o.replace ? StoreImportMode::replace : StoreImportMode::merge);
  if (!usage) {
    StoreError e = usage.error();
    // The store numbers entries from 1; with no blank lines allowed, entry N is line N.
    if (e.message.rfind("entry ", 0) == 0) e.message = where + ": line " + e.message.substr(6);
    return s.fail(e), s.exit_code;
  }
  emit(stdout, "imported " + std::to_string(entries->size()) + " entries into skill " + o.skill + ": now " +
                   std::to_string(usage->keys) + " keys, " + std::to_string(usage->bytes) + " bytes\n");
  return 0;
}

int run_usage(const StoreOptions& o) {
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
  CLI::App* store = app.add_subcommand("store", "Inspect and edit the per-skill store (docs/store.md).");
  store->require_subcommand(1);
  store->footer(
      "Exit codes: 0 done, 1 no such key or a quota would be exceeded, 2 bad input, 70 the database is "
      "damaged, newer, busy or unwritable.");

  auto common = [&](CLI::App* sub, bool needs_skill) {
    add_data_dir_option(*sub, o->data_dir);
    if (needs_skill)
      sub->add_option("--skill", o->skill, "Skill id whose entries to use")->required()->type_name("ID");
  };
  auto limits = [&](CLI::App* sub) {
    sub->add_option("--quota-bytes", o->policy.quota_bytes,
                    "Byte quota to enforce (default: the manifest default)")
        ->type_name("N");
    sub->add_option("--max-keys", o->policy.max_keys, "Key quota to enforce")->type_name("N");
    sub->add_option("--max-value-bytes", o->policy.max_value_bytes, "Largest value to accept, JSON bytes")
        ->type_name("N");
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
  common(set, true);
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
  common(imp, true);
  limits(imp);
  imp->add_option("FILE", o->file, "JSON lines file, or - for stdin")->required()->type_name("");
  imp->add_flag("--replace", o->replace,
                "Delete the skill's other keys: afterwards it holds exactly the file's");
  imp->callback(run(run_import));

  CLI::App* usage = store->add_subcommand("usage", "Print a skill's key count and bytes against the quota");
  common(usage, true);
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
