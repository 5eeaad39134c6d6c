#include "isolation/landlock.h"

#include <linux/landlock.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>

namespace skillbox::isolation {
namespace {

// The right bits, spelled out so this builds against kernel headers older than the running kernel
// (Debian 12's <linux/landlock.h> stops at ABI 2's REFER). Each is checked against the header where
// the header has it, so a renumbering there cannot go unnoticed. Values: include/uapi/linux/landlock.h.
constexpr uint64_t kFsAbi1 = (1ULL << 13) - 1;            // EXECUTE (bit 0) .. MAKE_SYM (bit 12)
constexpr uint64_t kFsRefer = 1ULL << 13;                 // ABI 2
constexpr uint64_t kFsTruncate = 1ULL << 14;              // ABI 3
constexpr uint64_t kFsIoctlDev = 1ULL << 15;              // ABI 5
constexpr uint64_t kNetBindTcp = 1ULL << 0;               // ABI 4
constexpr uint64_t kNetConnectTcp = 1ULL << 1;            // ABI 4
constexpr uint64_t kScopeAbstractUnixSocket = 1ULL << 0;  // ABI 6
constexpr uint64_t kScopeSignal = 1ULL << 1;              // ABI 6
constexpr uint32_t kCreateRulesetVersion = 1U << 0;

static_assert(kFsAbi1 ==
                  (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |
                   LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR |
                   LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
                   LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |
                   LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
                   LANDLOCK_ACCESS_FS_MAKE_SYM),
              "ABI 1 file-system rights must match <linux/landlock.h>");
static_assert(kCreateRulesetVersion == LANDLOCK_CREATE_RULESET_VERSION);
#ifdef LANDLOCK_ACCESS_FS_REFER
static_assert(kFsRefer == LANDLOCK_ACCESS_FS_REFER);
#endif
#ifdef LANDLOCK_ACCESS_FS_TRUNCATE
static_assert(kFsTruncate == LANDLOCK_ACCESS_FS_TRUNCATE);
#endif
#ifdef LANDLOCK_ACCESS_FS_IOCTL_DEV
static_assert(kFsIoctlDev == LANDLOCK_ACCESS_FS_IOCTL_DEV);
#endif
#ifdef LANDLOCK_ACCESS_NET_BIND_TCP
static_assert(kNetBindTcp == LANDLOCK_ACCESS_NET_BIND_TCP);
static_assert(kNetConnectTcp == LANDLOCK_ACCESS_NET_CONNECT_TCP);
#endif
#ifdef LANDLOCK_SCOPE_SIGNAL
static_assert(kScopeAbstractUnixSocket == LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET);
static_assert(kScopeSignal == LANDLOCK_SCOPE_SIGNAL);
#endif

// struct landlock_ruleset_attr as of ABI 6. Older headers declare only its first field; the kernel
// takes the size we pass and reads only the fields that size covers (copy_min_struct_from_user).
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};
static_assert(sizeof(RulesetAttr) == 24 && offsetof(RulesetAttr, scoped) == 16);

// Where the header does declare the newer fields, they must sit where ours do.
template <class HeaderAttr>
constexpr bool header_layout_matches() {
  if constexpr (requires(HeaderAttr attr) { attr.scoped; }) {
    return sizeof(HeaderAttr) == sizeof(RulesetAttr) &&
           offsetof(HeaderAttr, scoped) == offsetof(RulesetAttr, scoped);
  } else if constexpr (requires(HeaderAttr attr) { attr.handled_access_net; }) {
    return offsetof(HeaderAttr, handled_access_net) == offsetof(RulesetAttr, handled_access_net);
  } else {
    return offsetof(HeaderAttr, handled_access_fs) == 0;
  }
}
static_assert(header_layout_matches<landlock_ruleset_attr>(), "landlock_ruleset_attr layout changed");

// Bytes of RulesetAttr that ABI `abi` defines. The kernel would also take the full struct with zero
// tail fields, but passing the size the ABI knows is what landlock(7) documents, and keeps an ABI 2
// kernel from ever seeing fields it does not know.
std::size_t attr_size_for_abi(int abi) {
  if (abi >= 6) return sizeof(RulesetAttr);
  if (abi >= 4) return offsetof(RulesetAttr, scoped);
  return offsetof(RulesetAttr, handled_access_net);
}

}  // namespace

Result<int> probe_landlock_abi() {
  const long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  if (abi >= 1) return static_cast<int>(abi);
  if (abi < 0 && errno == ENOSYS) {
    return Error{Step::landlock, ENOSYS,
                 "the kernel has no Landlock (Linux 5.13+ with CONFIG_SECURITY_LANDLOCK)", true};
  }
  if (abi < 0 && errno == EOPNOTSUPP) {
    return Error{Step::landlock, EOPNOTSUPP,
                 "Landlock is disabled at boot (add landlock to the lsm= kernel parameter)", true};
  }
  return Error{Step::landlock, abi < 0 ? errno : 0, "Landlock ABI probe failed", true};
}

LandlockRights landlock_rights_for_abi(int abi) {
  LandlockRights rights;
  if (abi >= 1) rights.fs |= kFsAbi1;
  if (abi >= 2) rights.fs |= kFsRefer;
  if (abi >= 3) rights.fs |= kFsTruncate;
  if (abi >= 4) rights.net |= kNetBindTcp | kNetConnectTcp;
  if (abi >= 5) rights.fs |= kFsIoctlDev;
  if (abi >= 6) rights.scoped |= kScopeAbstractUnixSocket | kScopeSignal;
  // ABI 7 added audit flags, no right; abi > kNewestKnownLandlockAbi handles what is known.
  return rights;
}

Status landlock_restrict_self_no_rights(int abi) {
  if (abi < 1) return Status(Error{Step::landlock, EINVAL, "no Landlock ABI (probe first)", true});
  const LandlockRights rights = landlock_rights_for_abi(abi);
  const RulesetAttr attr{rights.fs, rights.net, rights.scoped};
  const long ruleset = syscall(SYS_landlock_create_ruleset, &attr, attr_size_for_abi(abi), 0U);
  if (ruleset < 0) return Status(Error{Step::landlock, errno, "landlock_create_ruleset", false});
  // No landlock_add_rule: the domain grants nothing.
  const long restricted = syscall(SYS_landlock_restrict_self, ruleset, 0U);
  const int restrict_errno = errno;
  close(static_cast<int>(ruleset));
  if (restricted != 0) return Status(Error{Step::landlock, restrict_errno, "landlock_restrict_self", false});
  return Status();
}

}  // namespace skillbox::isolation
