#include "engine/session.h"

#include <gtest/gtest.h>

#include "skill_fixture.h"

namespace skillbox::testing {
namespace {

TEST(Session, ModuleDefaultExportGetsInputAndReturnsJson) {
  RunResult r = run_source("export default function (input) { return { hello: input.name, n: 1 + 1 }; }",
                           R"({"name":"Ada"})");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"({"hello":"Ada","n":2})");
}

}  // namespace
}  // namespace skillbox::testing
