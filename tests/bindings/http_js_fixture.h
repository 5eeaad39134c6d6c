// tests/bindings/http_js_fixture.h — running a skill's JavaScript against the loopback test server, for
// the tests of openhuman.http (http_test.cpp) and fetch (fetch_test.cpp).
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "skill_fixture.h"
#include "support/http_test_server.h"

namespace skillbox::testing {

/// Allows the server's origin, GET/POST/PUT/DELETE and loopback (the server's address).
inline HttpPolicy loopback(const HttpTestServer& server) {
  HttpPolicy p;
  p.allow = {server.origin() + "/"};
  p.methods = {"GET", "POST", "PUT", "DELETE"};
  p.allow_private_addresses = true;  // the test server is on loopback
  return p;
}

/// A fresh data folder per test and one HttpTestServer; run_js runs a skill in the suite's isolation mode.
class HttpJsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "skillbox-http-js-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    data_dir = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(data_dir); }

  // Runs `body` as the body of the skill's default export (an async function of `input`), with
  // BASE the server's origin.
  RunResult run_js(const std::string& body, const HttpPolicy& policy, uint64_t timeout_ms = 20'000) {
    TempSkill skill({{"index.js", "const BASE = " + nlohmann::json(server.origin()).dump() +
                                      ";\nexport default async function (input) {\n" + body + "\n}\n"}});
    skill.manifest().permissions.http = policy;
    skill.manifest().limits.timeout_ms = timeout_ms;
    HostOptions options;
    options.data_dir = data_dir;
    TestRunner runner(options);
    return run(runner, skill);
  }
  nlohmann::json value_of(const RunResult& r) {
    EXPECT_EQ(r.outcome, Outcome::ok) << describe(r);
    return r.outcome == Outcome::ok ? nlohmann::json::parse(r.value_json) : nlohmann::json();
  }

  HttpTestServer server;
  std::filesystem::path data_dir;
};

}  // namespace skillbox::testing
