// Red-team regression: host-side buffers that bindings build from skill data (decoded text, base64)
// count against the heap limit. Before, TextDecoder.decode of N invalid bytes built 3N bytes of host
// text and atob/btoa about twice their input, outside the limit: one call could use several times
// the configured heap in host memory.
#include <gtest/gtest.h>

#include "skill_fixture.h"

namespace skillbox::testing {
namespace {

class HostBuffers : public ::testing::Test {
 protected:
  RunResult run_js(const std::string& source, Limits limits = {}) {
    TempSkill skill({{"index.js", source}});
    skill.manifest().limits = limits;
    return run(runner_, skill);
  }

  void TearDown() override {
    RunResult r = run_js(
        "export default () => [new TextDecoder().decode(new Uint8Array([104, 105, 255])), btoa('hi'), "
        "atob('aGk=')]");
    ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
    EXPECT_EQ(r.value_json, "[\"hi\xEF\xBF\xBD\",\"aGk=\",\"hi\"]");
  }

  TestRunner runner_;
};

// With an 8 MiB heap, a 2 MiB input fits the heap, but the host text of each call (6 MiB of U+FFFD,
// or the base64 work) on top of it does not: the call ends the run as memory_limit.
TEST_F(HostBuffers, DecodedTextAndBase64CountAgainstTheHeapLimit) {
  Limits limits;
  limits.memory_bytes = 8ull * 1024 * 1024;
  const std::string cases[] = {
      "export default () => new TextDecoder().decode(new Uint8Array(2 * 1024 * 1024).fill(255)).length",
      "export default () => new TextDecoder().decode(new Uint8Array(2 * 1024 * 1024).fill(255), "
      "{ stream: true }).length",
      "export default () => btoa('\\xff'.repeat(2 * 1024 * 1024)).length",
      "export default () => atob('/'.repeat(3 * 1024 * 1024)).length",
  };
  for (const std::string& source : cases) {
    RunResult r = run_js(source, limits);
    EXPECT_EQ(r.outcome, Outcome::memory_limit) << source << "\n" << describe(r);
  }
}

// Ordinary sizes still work, and the decoder's streaming across the internal slices is exact.
TEST_F(HostBuffers, LargeButFittingInputsStillDecode) {
  RunResult r = run_js(
      "export default () => {\n"
      "  const bytes = new TextEncoder().encode('\\u00e9\\u4e2d\\u{1F600}x'.repeat(100000));\n"
      "  const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);\n"
      "  const d = new TextDecoder(); const half = bytes.length / 2 + 1;\n"
      "  const streamed = d.decode(bytes.subarray(0, half), { stream: true }) + "
      "d.decode(bytes.subarray(half));\n"
      "  return [bytes.length, text.length, streamed === text, atob(btoa('\\xff'.repeat(300000))).length];\n"
      "}");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, "[1000000,500000,true,300000]");
}

}  // namespace
}  // namespace skillbox::testing
