// state/local_binding_registry.cpp — the local BindingRegistry: one owner file per id
// (binding_registry.h has the contract and the file format).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <random>
#include <system_error>
#include <utility>
#include <vector>

#include "base/file_read.h"
#include "base/quote.h"
#include "base/shell_word.h"
#include "base/skill_id.h"
#include "base/unique_fd.h"
#include "state/binding_registry.h"

namespace skillbox::state {
namespace {

namespace fs = std::filesystem;

/// Longest owner file: the header, a path of PATH_MAX bytes and the newline. Anything longer is damaged.
constexpr size_t kMaxOwnerBytes = kOwnerHeader.size() + PATH_MAX + 1;

std::string shown(const fs::path& p) {
  return base::quote(p.string(), 300);
}

std::string shown_id(std::string_view id) {
  return base::quote(id, base::kMaxSkillIdBytes + 8);
}

/// The command that makes `dir` the owner of its id, as the operator would type it.
std::string rebind_command(const fs::path& data_dir, const fs::path& dir, std::string_view id) {
  return "skillbox skills rebind " + base::shell_word(dir.string()) + " --id " + std::string(id) +
         " --data-dir " + base::shell_word(data_dir.string());
}

Error errno_error(std::string_view what, const fs::path& p, int err) {
  return Error{std::string(what) + " " + shown(p) + ": " +
               std::strerror(err)};  // NOLINT(concurrency-mt-unsafe)
}

/// Checks the id and makes `dir` canonical (symbolic links resolved, so one folder has one owner
/// text however it is reached).
Result<fs::path> canonical_folder(std::string_view id, const fs::path& dir) {
  if (!base::is_valid_skill_id(id)) {
    return Error{"skill id " + shown_id(id) + " is not valid: expected " + std::string(base::kSkillIdRule)};
  }
  std::error_code ec;
  fs::path root = fs::canonical(dir, ec);
  // The same words as the source reader's (runner/skill_reader.cpp): to the user it is one problem.
  if (ec) return Error{"cannot open skill folder " + shown(dir) + ": " + ec.message()};
  if (!fs::is_directory(root, ec)) {
    return Error{"cannot bind skill id " + shown_id(id) + " to " + shown(dir) + ": not a folder"};
  }
  // The owner file holds one line: a folder whose path contains a newline cannot be written down.
  if (root.string().find('\n') != std::string::npos) {
    return Error{"cannot bind skill id " + shown_id(id) + " to " + shown(root) +
                 ": the folder's path contains a newline; rename the folder"};
  }
  return root;
}

/// mkdir(2) of each of `dirs` in order, 0700, an existing one kept.
Result<void> make_folders(std::initializer_list<fs::path> dirs) {
  for (const fs::path& d : dirs) {
    if (::mkdir(d.c_str(), 0700) != 0 && errno != EEXIST) return errno_error("cannot create", d, errno);
  }
  return {};
}

/// The owner file's content as found on disk.
struct OwnerRead {
  enum class State : uint8_t { missing, bound, damaged } state = State::missing;
  fs::path dir;         // bound
  std::string problem;  // damaged
};

/// The folder named by owner-file content `text`, or why the content is not an owner file.
Result<fs::path> parse_owner(std::string_view text) {
  if (text.substr(0, kOwnerHeader.size()) != kOwnerHeader)
    return Error{"it does not start with \"skillbox-owner 1\""};
  std::string_view rest = text.substr(kOwnerHeader.size());
  if (rest.empty() || rest.back() != '\n') return Error{"it does not end with a newline"};
  rest.remove_suffix(1);
  if (rest.find('\n') != std::string_view::npos) return Error{"it has more than one folder line"};
  if (rest.find('\0') != std::string_view::npos) return Error{"the folder line contains a NUL byte"};
  const fs::path dir{std::string(rest)};
  // Only what canonical_folder writes is accepted: absolute, no "." or ".." or "//", no trailing '/'.
  if (!dir.is_absolute() || dir.lexically_normal() != dir || (rest.size() > 1 && rest.back() == '/')) {
    return Error{"the folder line is not a canonical absolute path"};
  }
  return dir;
}

/// Reads the owner file of `id`. An open failure other than "no such file" is an error.
Result<OwnerRead> read_owner(const fs::path& file) {
  // O_NOFOLLOW: the owner file is ours; a symbolic link planted in its place is damage, not an owner.
  base::UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY));
  if (!fd) {
    if (errno == ENOENT) return OwnerRead{};
    if (errno == ELOOP) return OwnerRead{OwnerRead::State::damaged, {}, "it is a symbolic link"};
    return errno_error("cannot read", file, errno);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return errno_error("cannot read", file, errno);
  if (!S_ISREG(st.st_mode)) return OwnerRead{OwnerRead::State::damaged, {}, "it is not a regular file"};
  auto text = base::read_fd(fd.get(), kMaxOwnerBytes);
  if (!text) {
    if (text.error().code == base::ReadErrc::too_large) {
      return OwnerRead{
          OwnerRead::State::damaged, {}, "it is larger than " + std::to_string(kMaxOwnerBytes) + " bytes"};
    }
    return Error{"cannot read " + shown(file) + ": " + text.error().message};
  }
  auto dir = parse_owner(*text);
  if (!dir) return OwnerRead{OwnerRead::State::damaged, {}, dir.error().message};
  return OwnerRead{OwnerRead::State::bound, std::move(*dir), {}};
}

/// Writes a complete owner file for `dir` under a fresh temporary name in `folder` (fsynced) and
/// returns that name.
Result<fs::path> write_temporary(const fs::path& folder, const fs::path& dir) {
  std::random_device rd;
  const std::string text = std::string(kOwnerHeader) + dir.string() + "\n";
  for (int attempt = 0; attempt < 8; ++attempt) {
    const fs::path tmp = folder / (".owner-tmp-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    base::UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd) {
      if (errno == EEXIST) continue;
      return errno_error("cannot create", tmp, errno);
    }
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::write(fd.get(), text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int err = n < 0 ? errno : EIO;
        ::unlink(tmp.c_str());
        return errno_error("cannot write", tmp, err);
      }
      done += static_cast<size_t>(n);
    }
    if (::fsync(fd.get()) != 0) {
      const int err = errno;
      ::unlink(tmp.c_str());
      return errno_error("cannot write", tmp, err);
    }
    return tmp;
  }
  return Error{"cannot create a temporary owner file in " + shown(folder)};
}

/// fsync of a folder, so a published name survives a crash. Best effort: some filesystems refuse it.
void sync_folder(const fs::path& folder) {
  base::UniqueFd fd(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd) (void)::fsync(fd.get());
}

Error no_data_dir_error() {
  return Error{"no data directory: set $SKILLBOX_HOME or pass one (--data-dir, HostOptions::data_dir)"};
}

/// `data_dir/bindings`, created (0700) as needed. Not under `skills/<id>/`: that folder is the
/// workspace's, and a skill whose fs.mode is none must find nothing of its own on disk.
Result<fs::path> bindings_folder(const fs::path& data_dir) {
  if (data_dir.empty()) return no_data_dir_error();
  std::error_code ec;
  fs::create_directories(data_dir.parent_path(), ec);  // an error shows at mkdir below
  const fs::path folder = DataLayout(data_dir).bindings_dir();
  if (auto made = make_folders({data_dir, folder}); !made) return made.error();
  return folder;
}

Error damaged_error(const fs::path& data_dir, std::string_view id, const std::string& problem,
                    const fs::path& dir) {
  return Error{"the owner file " + shown(DataLayout(data_dir).owner_file(id)) + " of skill id " +
               shown_id(id) + " is damaged (" + problem +
               "); skillbox will not guess which folder owns the id. To make this folder the owner, run: " +
               rebind_command(data_dir, dir, id) + " (embedders: skillbox::rebind_skill)"};
}

Result<SkillBinding> bind_skill_id(const fs::path& data_dir, std::string_view id, const fs::path& dir) {
  auto root = canonical_folder(id, dir);
  if (!root) return root.error();
  if (data_dir.empty()) return no_data_dir_error();  // never a path relative to the working directory
  const fs::path file = DataLayout(data_dir).owner_file(id);
  // Common case first: the id is already bound, and reading is all it takes.
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto owner = read_owner(file);
    if (!owner) return owner.error();
    if (owner->state == OwnerRead::State::damaged) return damaged_error(data_dir, id, owner->problem, *root);
    if (owner->state == OwnerRead::State::bound) {
      if (owner->dir == *root) return SkillBinding{std::string(id), *root, {}};
      std::error_code ec;
      const bool gone = !fs::exists(owner->dir, ec);
      return Error{
          "skill id " + shown_id(id) + " belongs to the folder " + shown(owner->dir) +
          (gone ? " (which no longer exists)" : "") + " in the data directory " + shown(data_dir) +
          ", not to " + shown(*root) +
          ". If this folder should own the id (and its store, workspace and secrets) from now on, "
          "run: " +
          rebind_command(data_dir, *root, id) +
          " (embedders: skillbox::rebind_skill); otherwise give this skill another id in its skill.json"};
    }
    auto folder = bindings_folder(data_dir);
    if (!folder) return folder.error();
    auto tmp = write_temporary(*folder, *root);
    if (!tmp) return tmp.error();
    // link(2) publishes the complete file only if no owner exists: of racing first runs exactly one wins.
    const int rc = ::link(tmp->c_str(), file.c_str());
    const int err = errno;
    ::unlink(tmp->c_str());
    if (rc == 0) {
      sync_folder(*folder);
      return SkillBinding{std::string(id), *root, {}};
    }
    if (err != EEXIST) return errno_error("cannot create", file, err);
    // Another first run won: read its owner.
  }
  return Error{"cannot bind skill id " + shown_id(id) + ": its owner file " + shown(file) +
               " keeps changing; try again"};
}

Result<void> check_skill_id(const fs::path& data_dir, std::string_view id, const fs::path& dir) {
  auto root = canonical_folder(id, dir);
  if (!root) return root.error();
  if (data_dir.empty()) return no_data_dir_error();
  auto owner = read_owner(DataLayout(data_dir).owner_file(id));
  if (!owner) return owner.error();
  if (owner->state == OwnerRead::State::missing) return {};
  if (owner->state == OwnerRead::State::bound && owner->dir == *root) return {};
  // Bound elsewhere or damaged: bind_skill_id says which, without writing (it reads first).
  auto bound = bind_skill_id(data_dir, id, dir);
  if (!bound) return bound.error();
  return {};
}

Result<SkillBinding> rebind_skill_id(const fs::path& data_dir, std::string_view id, const fs::path& dir) {
  auto root = canonical_folder(id, dir);
  if (!root) return root.error();
  auto folder = bindings_folder(data_dir);
  if (!folder) return folder.error();
  auto tmp = write_temporary(*folder, *root);
  if (!tmp) return tmp.error();
  const fs::path file = DataLayout(data_dir).owner_file(id);
  if (::rename(tmp->c_str(), file.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp->c_str());
    return errno_error("cannot replace", file, err);
  }
  sync_folder(*folder);
  return SkillBinding{std::string(id), *root, {}};
}

Result<std::vector<SkillBinding>> list_bindings(const fs::path& data_dir) {
  if (data_dir.empty()) return no_data_dir_error();
  std::vector<SkillBinding> out;
  std::error_code ec;
  const fs::path folder = DataLayout(data_dir).bindings_dir();
  fs::directory_iterator it(folder, ec);
  if (ec) {
    if (ec == std::errc::no_such_file_or_directory) return out;
    return Error{"cannot list " + shown(folder) + ": " + ec.message()};
  }
  for (const fs::directory_entry& entry : it) {
    const std::string id = entry.path().filename().string();
    if (!base::is_valid_skill_id(id)) continue;
    auto owner = read_owner(DataLayout(data_dir).owner_file(id));
    if (!owner) {
      out.push_back({id, {}, owner.error().message});
    } else if (owner->state == OwnerRead::State::bound) {
      out.push_back({id, owner->dir, {}});
    } else if (owner->state == OwnerRead::State::damaged) {
      out.push_back({id, {}, "the owner file is damaged (" + owner->problem + ")"});
    }
  }
  std::sort(out.begin(), out.end(), [](const SkillBinding& a, const SkillBinding& b) { return a.id < b.id; });
  return out;
}

class LocalBindingRegistry final : public BindingRegistry {
 public:
  explicit LocalBindingRegistry(DataLayout layout) : layout_(std::move(layout)) {}

  Result<SkillBinding> bind(std::string_view id, const fs::path& dir) override {
    return bind_skill_id(layout_.root(), id, dir);
  }
  Result<void> check(std::string_view id, const fs::path& dir) const override {
    return check_skill_id(layout_.root(), id, dir);
  }
  Result<SkillBinding> rebind(std::string_view id, const fs::path& dir) override {
    return rebind_skill_id(layout_.root(), id, dir);
  }
  Result<std::vector<SkillBinding>> list() const override { return list_bindings(layout_.root()); }

 private:
  const DataLayout layout_;
};

}  // namespace

std::shared_ptr<BindingRegistry> make_local_binding_registry(const DataLayout& layout) {
  return std::make_shared<LocalBindingRegistry>(layout);
}

}  // namespace skillbox::state

namespace skillbox {

namespace fs = std::filesystem;

// The public functions act on the local registry of the data directory HostOptions names.
Result<SkillBinding> bind_skill(const HostOptions& options, std::string_view id, const fs::path& dir) {
  return state::make_local_binding_registry(state::DataLayout(resolve_data_dir(options)))->bind(id, dir);
}

Result<SkillBinding> rebind_skill(const HostOptions& options, std::string_view id, const fs::path& dir) {
  return state::make_local_binding_registry(state::DataLayout(resolve_data_dir(options)))->rebind(id, dir);
}

Result<std::vector<SkillBinding>> skill_bindings(const HostOptions& options) {
  return state::make_local_binding_registry(state::DataLayout(resolve_data_dir(options)))->list();
}

}  // namespace skillbox
