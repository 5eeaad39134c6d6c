// tests/server/tar_support.h — tar archives built in memory with libarchive, with whatever entries a
// test needs (links, devices, "../" names) that a well-behaved tar would not write.
#pragma once

#include <archive.h>
#include <archive_entry.h>

#include <string>
#include <vector>

namespace skillbox::testing {

struct TarEntry {
  std::string path{};
  std::string content{};     // regular files
  unsigned type = AE_IFREG;  // AE_IFREG, AE_IFDIR, AE_IFLNK, AE_IFCHR, AE_IFIFO
  std::string link{};        // AE_IFLNK: the target; with type AE_IFREG: a hard link to it
};

/// A pax tar holding `entries` in order.
inline std::string make_tar(const std::vector<TarEntry>& entries) {
  std::string out(size_t{1} << 22, '\0');
  size_t used = 0;
  archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  archive_write_set_bytes_in_last_block(a, 1);
  archive_write_open_memory(a, out.data(), out.size(), &used);
  for (const TarEntry& e : entries) {
    archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, e.path.c_str());
    archive_entry_set_filetype(entry, e.type);
    archive_entry_set_perm(entry, e.type == AE_IFDIR ? 0755 : 0644);
    if (e.type == AE_IFLNK) archive_entry_set_symlink(entry, e.link.c_str());
    if (e.type == AE_IFREG && !e.link.empty()) archive_entry_set_hardlink(entry, e.link.c_str());
    const bool data = e.type == AE_IFREG && e.link.empty();
    archive_entry_set_size(entry, data ? static_cast<la_int64_t>(e.content.size()) : 0);
    archive_write_header(a, entry);
    if (data) archive_write_data(a, e.content.data(), e.content.size());
    archive_entry_free(entry);
  }
  archive_write_close(a);
  archive_write_free(a);
  out.resize(used);
  return out;
}

}  // namespace skillbox::testing
