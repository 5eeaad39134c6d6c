#include "isolation/status.h"

#include <string>

#include "base/errno_text.h"

namespace skillbox::isolation {

const char* step_name(Step step) {
  switch (step) {
    case Step::close_fds:
      return "close_fds";
    case Step::new_session:
      return "new_session";
    case Step::rlimits:
      return "rlimits";
    case Step::no_new_privs:
      return "no_new_privs";
    case Step::landlock:
      return "landlock";
    case Step::seccomp:
      return "seccomp";
    case Step::drop_privileges:
      return "drop_privileges";
  }
  return "unknown";
}

std::string describe(const Error& error) {
  std::string message = "process isolation: ";
  message += step_name(error.step);
  message += ": ";
  message += error.what;
  if (error.sys_errno != 0) {
    message += " (";
    message += base::errno_text(error.sys_errno);
    message += ")";
  }
  if (error.missing_feature) {
    message +=
        "; process isolation needs it and never runs weakened — to run skills without the worker "
        "wall, choose in-process isolation explicitly with --isolation=inprocess";
  }
  return message;
}

}  // namespace skillbox::isolation
