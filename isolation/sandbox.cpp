#include "isolation/sandbox.h"

#include <sys/personality.h>
#include <sys/prctl.h>
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
    return Status::failure(Error{Step::no_new_privs, errno, "prctl(PR_SET_NO_NEW_PRIVS)", false});
  }
  // The seccomp PROT_EXEC check sees the prot the caller passed; with READ_IMPLIES_EXEC the kernel
  // would add PROT_EXEC to every readable mapping after the check.
  const int persona = personality(kQueryPersonality);
  if (persona < 0) return Status::failure(Error{Step::no_new_privs, errno, "personality(query)", false});
  const unsigned long current = static_cast<unsigned>(persona);
  constexpr unsigned long kReadImpliesExec = READ_IMPLIES_EXEC;
  if ((current & kReadImpliesExec) != 0 && personality(current & ~kReadImpliesExec) < 0) {
    return Status::failure(Error{Step::no_new_privs, errno, "personality(clear READ_IMPLIES_EXEC)", false});
  }
  return Status::success();
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

Status sandbox_self(const PreparedSandbox& prepared, int socket_fd, const RlimitPlan& rlimits) {
  const int keep[] = {socket_fd};
  if (Status closed = close_fds_except(keep); !closed) return closed;
  // EPERM only for a process-group leader, which a freshly forked child never is.
  if (setsid() < 0) return Status::failure(Error{Step::new_session, errno, "setsid", false});
  if (Status limited = apply_rlimits(rlimits); !limited) return limited;
  if (Status nnp = set_no_new_privs(); !nnp) return nnp;
  if (Status landlocked = landlock_restrict_self_no_rights(prepared.landlock_abi); !landlocked)
    return landlocked;
  return prepared.seccomp.install();
}

}  // namespace skillbox::isolation
