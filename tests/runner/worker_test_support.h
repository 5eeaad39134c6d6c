// tests/runner/worker_test_support.h — what the worker tests read from /proc.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace skillbox::testing {

/// Children of this process that are zombies (state Z), from /proc.
int zombie_children();
/// Threads of this process.
int thread_count();
/// Open descriptors of this process.
int fd_count();
/// Resident set size of this process, in bytes.
uint64_t rss_bytes();
/// Value of `field` in /proc/PID/status ("Seccomp" -> "2"), empty when absent or unreadable.
std::string status_field(pid_t pid, const std::string& field);
/// Descriptor numbers open in process `pid`; empty when /proc/PID/fd is unreadable.
std::vector<int> open_fds_of(pid_t pid);

}  // namespace skillbox::testing
