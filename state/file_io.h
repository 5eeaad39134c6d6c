// state/file_io.h — the local backends' file helpers: random tokens and temporary names, the
// write/copy/fsync loops, and creating the data folders.
//
// They return 0 or an errno value, like beneath.h: each caller maps the value to its own error.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "base/unique_fd.h"
#include "bus/stop_token.h"

namespace skillbox::state::file_io {

/// Mode of every directory the local backends create: the data is the operator's user's only.
inline constexpr mode_t kDirMode = 0700;
/// Mode of every file the local backends create.
inline constexpr mode_t kFileMode = 0600;

/// Largest single write of write_all and copy_bytes' buffer: bounds the work between two checks of
/// the stop token (1 MiB is a few milliseconds of disk time).
inline constexpr size_t kIoChunkBytes = size_t{1} << 20;

/// The modification time of `st` in milliseconds since the epoch.
double mtime_ms(const struct stat& st);

/// 64 random bits from getrandom(2) (a time/pid mix in the impossible case that it fails).
uint64_t random_u64();

/// A fresh name for an atomic write's temporary file: kWorkspaceReservedPrefix, "tmp-", 16 random hex
/// digits.
std::string temporary_name();

/// Writes all `size` bytes of `data` to `fd`, retrying short writes and EINTR. 0 or an errno. With
/// `stop`, checked between writes of at most kIoChunkBytes: ECANCELED once it is requested.
int write_all(int fd, const uint8_t* data, size_t size, const bus::StopToken* stop = nullptr);

/// Copies the first `size` bytes of `from` (from its current offset) to `to`. 0 or an errno; EIO when
/// `from` is shorter than `size`; ECANCELED once `stop` (if given) is requested, checked per chunk.
int copy_bytes(int from, int to, uint64_t size, const bus::StopToken* stop = nullptr);

/// fsync(2) of a directory. 0 or an errno; EINVAL and EROFS (file systems that cannot sync
/// directories) count as success.
int sync_directory(int fd);

/// Creates `name` in `parent` (kDirMode) if missing and opens it as a directory without following a
/// symlink: the data folders below the data directory are ours, a symlink there is not. 0 or an errno.
int ensure_directory(int parent, const char* name, base::UniqueFd& out);

/// Opens the host's data directory `dir` (it may be a symlink: it is the host's choice), creating it
/// and its missing parents with kDirMode. 0 or an errno.
int open_data_directory(const std::filesystem::path& dir, base::UniqueFd& out);

}  // namespace skillbox::state::file_io
