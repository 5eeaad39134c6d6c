// worker/exe/main.cpp — `skillbox-worker`: the zygote that WorkerRunner execs (worker/zygote.h).
//
// Usage (by the runner only): skillbox-worker --zygote FD, where FD is the control socket. Anything
// else is refused: the executable is not a tool to run by hand.
#include <cstdio>
#include <cstring>
#include <functional>

#include "worker/zygote.h"

#ifdef SKILLBOX_WORKER_WALL_TEST
#include "worker/exe/wall_test_hooks.h"
#endif

int main(int argc, char** argv) {
  if (argc != 3 || std::strcmp(argv[1], "--zygote") != 0 || std::strcmp(argv[2], "3") != 0) {
    std::fputs("skillbox-worker is started by skillbox (WorkerRunner); it is not run by hand\n", stderr);
    return 2;
  }
#ifdef SKILLBOX_WORKER_WALL_TEST
  const std::function<void(JSContext*)> extra_api = skillbox::worker::install_wall_test_hooks;
#else
  const std::function<void(JSContext*)> extra_api;
#endif
  return skillbox::worker::zygote_main(3, extra_api);
}
