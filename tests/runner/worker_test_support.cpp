#include "worker_test_support.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace skillbox::testing {

namespace fs = std::filesystem;

int zombie_children() {
  const std::string self = std::to_string(getpid());
  int count = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    const size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    std::string state;
    std::string ppid;
    rest >> state >> ppid;
    if (state == "Z" && ppid == self) ++count;
  }
  return count;
}

int thread_count() {
  return std::stoi(status_field(getpid(), "Threads"));
}

int fd_count() {
  return static_cast<int>(open_fds_of(getpid()).size());
}

uint64_t rss_bytes() {
  const std::string kb = status_field(getpid(), "VmRSS");
  return std::stoull(kb) * 1024;
}

std::string status_field(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) {
      std::string v = line.substr(field.size() + 1);
      v.erase(0, v.find_first_not_of(" \t"));
      const size_t end = v.find_first_of(" \t");
      return end == std::string::npos ? v : v.substr(0, end);
    }
  }
  return {};
}

std::vector<int> open_fds_of(pid_t pid) {
  std::vector<int> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec))
    out.push_back(std::stoi(entry.path().filename().string()));
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace skillbox::testing
