// runaway: misbehaves on purpose, one way per export, to show each limit being enforced.
//
//   skillbox run examples/skills/runaway                  # spins forever   -> step_limit (exit 11)
//   skillbox run examples/skills/runaway --call hog       # eats memory     -> memory_limit (exit 10)
//   skillbox run examples/skills/runaway --call recurse   # recurses        -> stack_overflow (exit 13)
//   skillbox run examples/skills/runaway --call wait      # never settles   -> timeout (exit 12)
//
// Each export catches everything it can: once a limit is hit no more skill code runs, so the catch
// blocks never get to hide it.

export default function spin() {
  log("spinning forever");
  let n = 0;
  for (;;) {
    try {
      n++;
    } catch (e) {
      log("caught", String(e));
    }
  }
}

export function hog() {
  log("allocating until the heap limit");
  const chunks = [];
  for (;;) {
    try {
      chunks.push(new Array(64 * 1024).fill(chunks.length));
    } catch (e) {
      log("caught", String(e));
    }
  }
}

function deeper(n) {
  return deeper(n + 1) + 1;
}

export function recurse() {
  log("recursing without end");
  try {
    return deeper(0);
  } catch (e) {
    log("caught", String(e));
    return deeper(0);
  }
}

export function wait() {
  log("waiting for a promise that never settles");
  return new Promise(() => {
    setInterval(() => {}, 100);
  });
}
