// The request audit (server/audit.cpp): one JSON line per request, refused ones included, in a 0600
// file that holds no input value and no key, and that SIGHUP opens again after a rotation.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <csignal>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "serve_support.h"
#include "server/api_key.h"

namespace skillbox::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kKey = "audit-key-0123456789abcdef";
constexpr const char* kInput = "INPUT-VALUE-7f3a9c";

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

/// The audit lines of `path`, each parsed (a line that is not JSON fails the test).
std::vector<nlohmann::json> audit_lines(const fs::path& path) {
  std::vector<nlohmann::json> out;
  std::istringstream in(read_text(path));
  for (std::string line; std::getline(in, line);) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "not JSON: " << line;
    out.push_back(std::move(j));
  }
  return out;
}

/// The line of request `id`, or null.
nlohmann::json line_of(const fs::path& path, const std::string& id) {
  for (nlohmann::json& j : audit_lines(path)) {
    if (j["request_id"] == id) return j;
  }
  return nullptr;
}

class Audit : public ::testing::Test {
 protected:
  void SetUp() override {
    write_skill(
        tmp_.path() / "skills" / "echo", "echo", "export function shout(input) { return input.word + '!'; }",
        R"("permissions": {"fs": {"mode": "read"}, "http": {"allow": ["https://api.example.com/v1/"]}})");
    write_file(tmp_.path() / "serve.toml",
               "listen = [\"127.0.0.1:0\"]\nisolation = \"inprocess\"\naudit = \"audit.log\"\n[tenants.t]\n"
               "key_sha256 = [\"" +
                   server::key_hash_hex(server::hash_api_key(kKey)) +
                   "\"]\nskills = \"skills\"\ndata_dir = \"data\"\n");
    server_ = std::make_unique<ServeProcess>(
        std::vector<std::string>{"--config", (tmp_.path() / "serve.toml").string()});
    ASSERT_FALSE(server_->url.empty());
  }

  HttpReply run_echo() {
    return http("POST", server_->url + "/v1/skills/echo/run", kKey,
                std::string(R"({"export": "shout", "input": {"word": ")") + kInput + "\"}}");
  }

  TempDir tmp_;
  fs::path audit_ = tmp_.path() / "audit.log";
  std::unique_ptr<ServeProcess> server_;
};

TEST_F(Audit, ARunIsOneLineWithItsFactsAndNoInputOrKey) {
  const HttpReply run = run_echo();
  ASSERT_EQ(run.status, 200);
  ASSERT_EQ(run.json()["value"], std::string(kInput) + "!");
  const HttpReply refused = http("GET", server_->url + "/v1/skills", "not-the-key-0123456789");
  ASSERT_EQ(refused.status, 401);
  // The line is written as the response goes out, so it is there once the client has the response.
  const nlohmann::json line = line_of(audit_, run.header("x-request-id"));
  ASSERT_TRUE(line.is_object()) << read_text(audit_);
  EXPECT_TRUE(std::regex_match(line["time"].get<std::string>(),
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)")))
      << line["time"];
  EXPECT_EQ(line["tenant"], "t");
  EXPECT_EQ(line["method"], "POST");
  EXPECT_EQ(line["route"], "/v1/skills/{id}/run");
  EXPECT_EQ(line["status"], 200);
  EXPECT_EQ(line["skill"], "echo");
  EXPECT_EQ(line["export"], "shout");
  EXPECT_EQ(line["outcome"], "ok");
  EXPECT_EQ(line["usage"], run.json()["usage"]);
  EXPECT_GT(line["usage"]["steps"].get<uint64_t>(), 0u);
  EXPECT_EQ(line["permissions"]["fs"], "read");
  EXPECT_EQ(line["permissions"]["http_allow"], nlohmann::json::array({"https://api.example.com/v1/"}));
  EXPECT_TRUE(line.contains("digest"));
  EXPECT_EQ(line["origins"], nlohmann::json::array());  // it made no http request

  const nlohmann::json denied = line_of(audit_, refused.header("x-request-id"));
  ASSERT_TRUE(denied.is_object()) << read_text(audit_);
  EXPECT_EQ(denied["status"], 401);
  EXPECT_TRUE(denied["tenant"].is_null());
  EXPECT_EQ(denied["route"], "/v1/skills");

  const std::string text = read_text(audit_);
  EXPECT_EQ(text.find(kInput), std::string::npos) << "an input value is in the audit";
  EXPECT_EQ(text.find(kKey), std::string::npos) << "the key is in the audit";
  EXPECT_EQ(text.find("not-the-key"), std::string::npos) << "a presented key is in the audit";
  EXPECT_EQ(text.find(server::key_hash_hex(server::hash_api_key(kKey))), std::string::npos);
  struct stat st {};
  ASSERT_EQ(::stat(audit_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(Audit, SighupAfterARenameStartsANewFile) {
  const HttpReply before = run_echo();
  ASSERT_EQ(before.status, 200);
  const fs::path rotated = tmp_.path() / "audit.log.1";
  fs::rename(audit_, rotated);
  server_->signal(SIGHUP);
  ASSERT_TRUE(server_->wait_for_err("config reloaded from")) << server_->err();
  const HttpReply after = run_echo();
  ASSERT_EQ(after.status, 200);
  EXPECT_TRUE(line_of(rotated, before.header("x-request-id")).is_object());
  EXPECT_TRUE(line_of(rotated, after.header("x-request-id")).is_null()) << "written to the rotated file";
  const nlohmann::json line = line_of(audit_, after.header("x-request-id"));
  ASSERT_TRUE(line.is_object()) << "no line in the new file: " << read_text(audit_);
  EXPECT_EQ(line["outcome"], "ok");
  struct stat st {};
  ASSERT_EQ(::stat(audit_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

}  // namespace
}  // namespace skillbox::testing
