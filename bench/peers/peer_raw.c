/* bench/peers/peer_raw.c — the floor of the peers benchmark: raw QuickJS, the same engine build as
 * skillbox's (the project's `quickjs` target), used the way a plain embedder would: a new runtime and a
 * context with every standard intrinsic (JS_NewContext), one JS_Eval, everything freed. No limits.
 *
 *   peer_raw WORKLOAD_FILE W1|W2|W3 ITERATIONS   one line per timed iteration: wall-clock and process
 *                                                CPU microseconds, minor page faults
 *   peer_raw WORKLOAD_FILE W4 SANDBOXES          one line: resident bytes added per live sandbox
 *
 * The protocol is the same for every peer (bench/peers/run.sh reads it). */
#include <quickjs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static char* read_workload(const char* path, long* expect) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  static char body[1 << 16];
  size_t n = fread(body, 1, sizeof body - 1, f);
  fclose(f);
  body[n] = 0;
  const char* tag = strstr(body, "// expect: ");
  if (tag == NULL) return NULL;
  *expect = strtol(tag + strlen("// expect: "), NULL, 10);
  static const char head[] = "(function () {\n";
  static const char tail[] = "\n})()";
  char* src = malloc(sizeof head + n + sizeof tail);
  if (src == NULL) return NULL;
  snprintf(src, sizeof head + n + sizeof tail, "%s%s%s", head, body, tail);
  return src;
}

static double now_us(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Minor page faults of this process so far: every fresh page the allocator touches is one. */
static long minor_faults(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

static long resident_bytes(void) {
  FILE* f = fopen("/proc/self/statm", "r");
  long size = 0, resident = 0;
  if (f == NULL) return 0;
  if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = 0;
  fclose(f);
  return resident * sysconf(_SC_PAGESIZE);
}

/* One sandbox: runtime, context, evaluated source. Returns 0 when the result is not `expect`. */
static int open_sandbox(const char* src, long expect, JSRuntime** rt_out, JSContext** ctx_out) {
  JSRuntime* rt = JS_NewRuntime();
  JSContext* ctx = JS_NewContext(rt);
  JSValue v = JS_Eval(ctx, src, strlen(src), "workload.js", JS_EVAL_TYPE_GLOBAL);
  int64_t got = -1;
  if (JS_IsException(v) || JS_ToInt64(ctx, &got, v) != 0) got = -1;
  JS_FreeValue(ctx, v);
  *rt_out = rt;
  *ctx_out = ctx;
  return got == expect;
}

static void close_sandbox(JSRuntime* rt, JSContext* ctx) {
  JS_FreeContext(ctx);
  JS_FreeRuntime(rt);
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s WORKLOAD_FILE W1|W2|W3|W4 COUNT\n", argv[0]);
    return 2;
  }
  long expect = 0;
  char* src = read_workload(argv[1], &expect);
  const int count = atoi(argv[3]);
  if (src == NULL || count < 1) {
    fprintf(stderr, "peer_raw: cannot read workload %s\n", argv[1]);
    return 2;
  }
  JSRuntime* rt;
  JSContext* ctx;
  if (strcmp(argv[2], "W4") == 0) {
    JSRuntime** rts = calloc((size_t)count, sizeof *rts);
    JSContext** ctxs = calloc((size_t)count, sizeof *ctxs);
    if (!open_sandbox(src, expect, &rt, &ctx)) return 1; /* warm the process once */
    close_sandbox(rt, ctx);
    const long before = resident_bytes();
    for (int i = 0; i < count; i++) {
      if (!open_sandbox(src, expect, &rts[i], &ctxs[i])) return 1;
    }
    const long after = resident_bytes();
    for (int i = 0; i < count; i++) close_sandbox(rts[i], ctxs[i]);
    printf("%ld\n", (after - before) / count);
    return 0;
  }
  for (int i = 0; i < count; i++) {
    const long f0 = minor_faults();
    const double t0 = now_us(CLOCK_MONOTONIC), c0 = now_us(CLOCK_PROCESS_CPUTIME_ID);
    const int ok = open_sandbox(src, expect, &rt, &ctx);
    close_sandbox(rt, ctx);
    const double t1 = now_us(CLOCK_MONOTONIC), c1 = now_us(CLOCK_PROCESS_CPUTIME_ID);
    const long f1 = minor_faults();
    if (!ok) {
      fprintf(stderr, "peer_raw: %s gave an unexpected result\n", argv[1]);
      return 1;
    }
    printf("%.1f %.1f %ld\n", t1 - t0, c1 - c0, f1 - f0);
  }
  free(src);
  return 0;
}
