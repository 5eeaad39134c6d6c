#include "isolation/rlimits.h"

#include <sys/resource.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <span>

namespace skillbox::isolation {
namespace {

constexpr uint64_t kMillisPerSecond = 1000;

rlim_t saturating_sum(std::initializer_list<uint64_t> terms) {
  uint64_t total = 0;
  for (const uint64_t term : terms) {
    if (term > std::numeric_limits<uint64_t>::max() - total) return RLIM_INFINITY;
    total += term;
  }
  return total >= RLIM_INFINITY ? RLIM_INFINITY : static_cast<rlim_t>(total);
}

// "VmSize:\t  123456 kB" -> bytes.
bool parse_kb_field(const char* line, const char* name, uint64_t& out) {
  const std::size_t length = std::strlen(name);
  if (std::strncmp(line, name, length) != 0) return false;
  unsigned long long kb = 0;
  if (std::sscanf(line + length, " %llu kB", &kb) != 1) return false;
  out = static_cast<uint64_t>(kb) * 1024;
  return true;
}

}  // namespace

Result<MemoryBaseline> measure_memory_baseline() {
  std::FILE* file = std::fopen("/proc/self/status", "re");
  if (file == nullptr)
    return Error{Step::rlimits, errno, "cannot read /proc/self/status for VmSize/VmData", false};
  MemoryBaseline baseline;
  bool have_size = false;
  bool have_data = false;
  std::array<char, 256> line{};
  while (std::fgets(line.data(), static_cast<int>(line.size()), file) != nullptr) {
    have_size = parse_kb_field(line.data(), "VmSize:", baseline.address_space_bytes) || have_size;
    have_data = parse_kb_field(line.data(), "VmData:", baseline.data_bytes) || have_data;
  }
  // Opened for reading: nothing is buffered to write, so a failed close loses nothing.
  (void)std::fclose(file);
  if (!have_size || !have_data)
    return Error{Step::rlimits, 0, "/proc/self/status lacks VmSize/VmData", false};
  return baseline;
}

RlimitPlan plan_worker_rlimits(const WorkerLimits& limits, const MemoryBaseline& baseline,
                               int highest_kept_fd) {
  RlimitPlan plan;
  plan.address_space_bytes =
      saturating_sum({baseline.address_space_bytes, limits.memory_bytes, kWorkerMemoryMarginBytes});
  plan.data_bytes = saturating_sum({baseline.data_bytes, limits.memory_bytes, kWorkerMemoryMarginBytes});
  const uint64_t whole_seconds =
      limits.deadline_ms / kMillisPerSecond + (limits.deadline_ms % kMillisPerSecond != 0 ? 1 : 0);
  plan.cpu_seconds = saturating_sum({whole_seconds, kCpuGraceSeconds});
  plan.open_files = static_cast<rlim_t>(highest_kept_fd < 0 ? 1 : highest_kept_fd + 2);
  plan.file_size_bytes = 0;
  plan.processes = 0;
  plan.core_bytes = 0;
  return plan;
}

namespace {

struct Entry {
  int resource;
  rlim_t value;
  const char* what;
};

Status apply_entries(std::span<const Entry> entries) {
  for (const Entry& entry : entries) {
    rlimit current{};
    if (getrlimit(entry.resource, &current) != 0)
      return Status(Error{Step::rlimits, errno, entry.what, false});
    const rlim_t value = entry.value < current.rlim_max ? entry.value : current.rlim_max;
    const rlimit wanted{value, value};
    if (setrlimit(entry.resource, &wanted) != 0)
      return Status(Error{Step::rlimits, errno, entry.what, false});
  }
  return Status();
}

}  // namespace

Status apply_rlimits(const RlimitPlan& plan) {
  // Core and file size first: if a later step fails and the child crashes, it writes nothing.
  const std::array<Entry, 7> entries{{
      {RLIMIT_CORE, plan.core_bytes, "setrlimit(RLIMIT_CORE)"},
      {RLIMIT_FSIZE, plan.file_size_bytes, "setrlimit(RLIMIT_FSIZE)"},
      {RLIMIT_NPROC, plan.processes, "setrlimit(RLIMIT_NPROC)"},
      {RLIMIT_NOFILE, plan.open_files, "setrlimit(RLIMIT_NOFILE)"},
      {RLIMIT_CPU, plan.cpu_seconds, "setrlimit(RLIMIT_CPU)"},
      {RLIMIT_DATA, plan.data_bytes, "setrlimit(RLIMIT_DATA)"},
      {RLIMIT_AS, plan.address_space_bytes, "setrlimit(RLIMIT_AS)"},
  }};
  return apply_entries(entries);
}

Status lower_invocation_rlimits(const RlimitPlan& plan) {
  const std::array<Entry, 3> entries{{
      {RLIMIT_CPU, plan.cpu_seconds, "setrlimit(RLIMIT_CPU)"},
      {RLIMIT_DATA, plan.data_bytes, "setrlimit(RLIMIT_DATA)"},
      {RLIMIT_AS, plan.address_space_bytes, "setrlimit(RLIMIT_AS)"},
  }};
  return apply_entries(entries);
}

}  // namespace skillbox::isolation
