// cli/init_command.cpp — `skillbox init DIR [--ts]`: a new skill folder that runs and passes its tests.
//
// The files come from cli/templates/ (built in, cli/templates.h). Nothing is ever overwritten: a
// file that exists already stops the command before it writes anything, and each file is created
// with O_EXCL, so a file that appears meanwhile is not overwritten either.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "base/escape.h"
#include "base/quote.h"
#include "base/skill_id.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/output.h"
#include "cli/templates.h"

namespace skillbox::cli {
namespace {

namespace fs = std::filesystem;

struct InitOptions {
  std::string dir;
  bool typescript = false;
  std::string id;
  std::string name;
};

struct PlannedFile {
  std::string name;  // in the new skill folder
  std::string text;
};

void replace_all(std::string& text, std::string_view from, std::string_view to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

/// A skill id made from a folder name: lower case, runs of other characters as one '-', at most 64
/// characters, starting and ending with a letter or digit. Empty when nothing usable is left.
std::string id_from_folder(const std::string& folder) {
  std::string id;
  for (const char c : folder) {
    const char lower = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    const bool keep = (lower >= 'a' && lower <= 'z') || (lower >= '0' && lower <= '9') || lower == '.' ||
                      lower == '_' || lower == '-';
    if (keep) {
      id += lower;
    } else if (!id.empty() && id.back() != '-') {
      id += '-';
    }
  }
  while (!id.empty() &&
         !((id.front() >= 'a' && id.front() <= 'z') || (id.front() >= '0' && id.front() <= '9')))
    id.erase(0, 1);
  if (id.size() > 64) id.resize(64);
  while (!id.empty() && (id.back() == '-' || id.back() == '.' || id.back() == '_')) id.pop_back();
  return id;
}

/// "hello-world" -> "Hello world".
std::string name_from_id(const std::string& id) {
  std::string name = id;
  for (char& c : name)
    if (c == '-' || c == '_' || c == '.') c = ' ';
  if (!name.empty() && name[0] >= 'a' && name[0] <= 'z') name[0] = static_cast<char>(name[0] - 'a' + 'A');
  return name;
}

/// The files of the chosen template, with {{id}} and {{name}} filled in ({{name}} JSON-escaped: it
/// only appears inside JSON strings).
std::vector<PlannedFile> plan(const InitOptions& o, const std::string& id, const std::string& name) {
  const std::string prefix = o.typescript ? "ts/" : "js/";
  std::string name_json = nlohmann::json(name).dump(-1, ' ', /*ensure_ascii=*/false);
  name_json = name_json.substr(1, name_json.size() - 2);
  std::vector<PlannedFile> files;
  for (const EmbeddedFile& f : template_files()) {
    std::string target;
    if (f.name == "skillbox.d.ts" || f.name == "skill.schema.json" || f.name == "skill.test.schema.json") {
      target = std::string(f.name);
    } else if (f.name.starts_with(prefix)) {
      target = f.name.substr(prefix.size());
      if (target == "gitignore") target = ".gitignore";  // a dotfile in the source tree would hide it
    } else {
      continue;
    }
    std::string text(f.text);
    replace_all(text, "{{id}}", id);
    replace_all(text, "{{name}}", name_json);
    files.push_back(PlannedFile{std::move(target), std::move(text)});
  }
  // The manifest and the code first, as a user reads them.
  const auto rank = [](const std::string& n) {
    constexpr std::string_view kOrder[] = {"skill.json",    "index.js",          "index.ts",
                                           "package.json",  "tsconfig.json",     "skill.test.json",
                                           "skillbox.d.ts", "skill.schema.json", "skill.test.schema.json"};
    for (size_t i = 0; i < std::size(kOrder); ++i)
      if (n == kOrder[i]) return i;
    return std::size(kOrder);
  };
  std::stable_sort(files.begin(), files.end(),
                   [&](const PlannedFile& a, const PlannedFile& b) { return rank(a.name) < rank(b.name); });
  return files;
}

/// Creates `path` with `text`, failing if it exists. Returns an error message or "".
std::string create_file(const fs::path& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return std::strerror(errno);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(n < 0 ? errno : EIO);
      ::close(fd);
      return why;
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) return std::strerror(errno);
  return "";
}

/// `text` as one shell word: as it is when it only has characters no shell treats specially, else in
/// single quotes (a ' inside written as '\'').
std::string shell_quote(const std::string& text) {
  const bool plain = !text.empty() && text.find_first_not_of(
                                          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789_./-+:@%") == std::string::npos;
  if (plain) return text;
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// How the hints should call skillbox: `skillbox` when that name on PATH is this very program, else
// the full path of this program (a build tree's binary, say), so that every hint works as written.
std::string skillbox_command() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "skillbox";
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "";
  while (true) {
    const size_t colon = dirs.find(':');
    const std::string dir(dirs.substr(0, colon));
    if (!dir.empty() && fs::equivalent(fs::path(dir) / "skillbox", self, ec)) return "skillbox";
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  return base::escape_text(shell_quote(self.string()));
}

int fail(const std::string& message) {
  say("", "init: " + message);
  return kExitUsage;
}

int init_skill(const InitOptions& o) {
  const fs::path dir = o.dir;
  const std::string shown = base::quote(o.dir, 200, base::QuoteStyle::json);
  std::error_code ec;
  fs::path absolute = fs::absolute(dir, ec).lexically_normal();
  if (absolute.has_filename() == false) absolute = absolute.parent_path();
  std::string id = o.id;
  if (id.empty()) {
    id = id_from_folder(absolute.filename().string());
    if (!base::is_valid_skill_id(id))
      return fail("cannot make a skill id from the folder name " + shown + "; give one with --id (" +
                  std::string(base::kSkillIdRule) + ")");
  } else if (!base::is_valid_skill_id(id)) {
    return fail("--id " + base::quote(id, 80, base::QuoteStyle::json) + ": a skill id has " +
                std::string(base::kSkillIdRule));
  }
  const std::string name = o.name.empty() ? name_from_id(id) : o.name;
  try {
    (void)nlohmann::json(name).dump();  // throws on text that is not UTF-8
  } catch (const nlohmann::json::exception&) {
    return fail("--name: not valid UTF-8; give the name as UTF-8 text");
  }
  const std::vector<PlannedFile> files = plan(o, id, name);

  // The manifest must load before anything is written (a --name with control characters, say).
  for (const PlannedFile& f : files) {
    if (f.name != "skill.json") continue;
    if (auto m = Skill::parse_manifest(f.text); !m) return fail("--name: " + m.error().message);
  }

  const fs::file_status status = fs::symlink_status(dir, ec);
  if (fs::exists(status) && !fs::is_directory(status))
    return fail(shown + " exists and is not a folder; give a new or empty folder");
  for (const PlannedFile& f : files) {
    if (fs::exists(fs::symlink_status(dir / f.name, ec)))
      return fail(base::quote((dir / f.name).string(), 200, base::QuoteStyle::json) +
                  " exists already; init never overwrites a file: give a new or empty folder");
  }
  fs::create_directories(dir, ec);
  if (ec) return fail("cannot create " + shown + ": " + ec.message());

  std::string written;
  for (const PlannedFile& f : files) {
    if (std::string why = create_file(dir / f.name, f.text); !why.empty())
      return fail("cannot create " + base::quote((dir / f.name).string(), 200, base::QuoteStyle::json) +
                  ": " + why + (written.empty() ? "" : " (written before it:" + written + ")"));
    written += " " + f.name;
  }

  // The hints are commands to copy: the folder quoted for the shell (and escaped for the terminal).
  const std::string where = base::escape_text(shell_quote(o.dir));
  const std::string self = skillbox_command();
  const bool on_path = self == "skillbox";
  std::string out = "Created skill \"" + id + "\" in " + where + ":" + written + "\n\nNext:\n";
  if (o.typescript) {
    const std::string npm_test = on_path ? "npm test" : "SKILLBOX=" + self + " npm test";
    out += "  cd " + where + "\n";
    out += "  npm install      # the pinned typescript and esbuild, into node_modules/\n";
    out += "  " + npm_test + "         # builds index.ts into dist/index.js, then runs skill.test.json\n";
  } else {
    out += "  " + self + " run " + where + " --input '{\"name\": \"Ada\"}'\n";
    out += "  " + self + " test " + where + "     # runs the tests in skill.test.json\n";
  }
  if (!on_path) {
    // A build tree's binary sits beside CMakeCache.txt: name that folder, which cmake --install takes.
    std::error_code exe_ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", exe_ec);
    const bool build_tree = !exe_ec && fs::exists(exe.parent_path() / "CMakeCache.txt", exe_ec);
    const std::string build_dir =
        build_tree ? base::escape_text(shell_quote(exe.parent_path().string())) : std::string("BUILD_DIR");
    out +=
        "\n`skillbox` is not on your PATH, so these call it by its full path. To put it there, install "
        "it\n(cmake --install " +
        build_dir + " --prefix ~/.local) and add ~/.local/bin to PATH.\n";
  }
  emit(stdout, out);
  return 0;
}

}  // namespace

void add_init_command(CLI::App& app, CommandStatus& status) {
  auto o = std::make_shared<InitOptions>();
  CLI::App* init = app.add_subcommand(
      "init", "Create a new skill folder: skill.json, index.js (or index.ts with --ts), types, tests.");
  init->add_option("DIR", o->dir, "Folder to create (or an empty one); never overwrites a file")
      ->required()
      ->type_name("");
  init->add_flag("--ts", o->typescript,
                 "TypeScript: index.ts, tsconfig.json and a package.json with pinned typescript and esbuild "
                 "whose `npm run build` writes the entry dist/index.js");
  init->add_option("--id", o->id, "Skill id (default: made from the folder name)")->type_name("ID");
  init->add_option("--name", o->name, "Human-readable name in skill.json (default: made from the id)")
      ->type_name("TEXT");
  init->footer(
      "Files: skill.json (the manifest), index.js or index.ts, skillbox.d.ts (the API's "
      "types),\nskill.test.json (run by `skillbox test DIR`); with --ts also package.json, "
      "tsconfig.json, .gitignore.");
  init->callback([o, &status] { status.exit_code = init_skill(*o); });
}

}  // namespace skillbox::cli
