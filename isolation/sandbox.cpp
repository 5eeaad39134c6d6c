#include "isolation/sandbox.h"

#include <grp.h>
#include <linux/capability.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "isolation/fd_hygiene.h"
#include "isolation/landlock.h"

namespace skillbox::isolation {
namespace {

constexpr unsigned long kQueryPersonality = 0xffffffffUL;

Status set_no_new_privs() {
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return Status(Error{Step::no_new_privs, errno, "prctl(PR_SET_NO_NEW_PRIVS)", false});
  }
  // The seccomp PROT_EXEC check sees the prot the caller passed; with READ_IMPLIES_EXEC the kernel
  // would add PROT_EXEC to every readable mapping after the check.
  const int persona = personality(kQueryPersonality);
  if (persona < 0) return Status(Error{Step::no_new_privs, errno, "personality(query)", false});
  const unsigned long current = static_cast<unsigned>(persona);
  constexpr unsigned long kReadImpliesExec = READ_IMPLIES_EXEC;
  if ((current & kReadImpliesExec) != 0 && personality(current & ~kReadImpliesExec) < 0) {
    return Status(Error{Step::no_new_privs, errno, "personality(clear READ_IMPLIES_EXEC)", false});
  }
  return Status();
}

// The unprivileged identity a worker of a root supervisor takes: the conventional `nobody`. No file
// of the host needs to be readable by it (the worker opens none), and no other process runs as it
// with anything a worker could reach (it can signal only processes of its own uid, and Landlock and
// seccomp fence the rest).
constexpr uid_t kUnprivilegedId = 65534;

// No capability survives into skill code: a worker forked from a root caller held every capability
// (CapEff 000001fffeffffff), so a bug that escaped the engine could, for one, map address 0
// (CAP_SYS_RAWIO bypasses mmap_min_addr). A root worker drops its supplementary groups, empties the
// bounding set while it may, then takes the unprivileged uid and gid: the kernel clears the
// permitted, effective and ambient sets on that change. A non-root worker with capabilities (file
// capabilities on the executable) clears its sets with capset(2). Changing the uid also clears the
// parent-death signal (prctl(2)), which a worker relies on to die with its zygote: it is armed again
// afterwards, and a parent that died in between is a failure (the signal would never come). Never
// allocates.
Status drop_privileges() {
  const auto failed = [](const char* what) {
    return Status(Error{Step::drop_privileges, errno, what, false});
  };
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
    return failed("prctl(PR_CAP_AMBIENT_CLEAR_ALL)");
  if (geteuid() == 0 || getuid() == 0) {
    const pid_t parent = getppid();
    int death_signal = 0;
    if (prctl(PR_GET_PDEATHSIG, &death_signal, 0, 0, 0) != 0) return failed("prctl(PR_GET_PDEATHSIG)");
    for (int cap = 0; cap <= CAP_LAST_CAP; ++cap) {
      if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
        return failed("prctl(PR_CAPBSET_DROP)");
    }
    if (setgroups(0, nullptr) != 0) return failed("setgroups");
    if (setresgid(kUnprivilegedId, kUnprivilegedId, kUnprivilegedId) != 0) return failed("setresgid");
    if (setresuid(kUnprivilegedId, kUnprivilegedId, kUnprivilegedId) != 0) return failed("setresuid");
    if (death_signal != 0) {
      if (prctl(PR_SET_PDEATHSIG, death_signal, 0, 0, 0) != 0) return failed("prctl(PR_SET_PDEATHSIG)");
      if (getppid() != parent) {
        errno = ESRCH;
        return failed("the parent died while privileges were dropped");
      }
    }
  }
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (syscall(SYS_capset, &header, data) != 0) return failed("capset");
  return Status();
}

}  // namespace

Result<PreparedSandbox> prepare_sandbox() {
  Result<int> abi = probe_landlock_abi();
  if (!abi) return abi.error();
  if (const Status seccomp = probe_seccomp(); !seccomp) return seccomp.error();
  Result<SeccompProgram> program = SeccompProgram::compile(worker_syscall_policy());
  if (!program) return program.error();
  return PreparedSandbox{abi.value(), std::move(program.value())};
}

Status sandbox_self(const PreparedSandbox& prepared, int socket_fd, const RlimitPlan& rlimits,
                    int diagnostics_fd) {
  const bool diagnostics = diagnostics_fd >= 0 && diagnostics_fd < socket_fd;
  const int keep_both[] = {diagnostics_fd, socket_fd};
  const int keep_socket[] = {socket_fd};
  const Status closed = diagnostics ? close_fds_except(keep_both) : close_fds_except(keep_socket);
  if (!closed) return closed;
  // EPERM only for a process-group leader, which a freshly forked child never is.
  if (setsid() < 0) return Status(Error{Step::new_session, errno, "setsid", false});
  if (Status dropped = drop_privileges(); !dropped) return dropped;
  if (Status limited = apply_rlimits(rlimits); !limited) return limited;
  if (Status nnp = set_no_new_privs(); !nnp) return nnp;
  if (Status landlocked = landlock_restrict_self_no_rights(prepared.landlock_abi); !landlocked)
    return landlocked;
  return prepared.seccomp.install();
}

}  // namespace skillbox::isolation
