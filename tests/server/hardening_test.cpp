// What the server does to clients that misbehave at the HTTP level, and its UNIX socket: a header block
// above the cap is 431, a client that never finishes its request is cut off at the idle timeout while
// others are served, and the socket file admits only its owner.
#include <curl/curl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "serve_support.h"
#include "server/api_key.h"

namespace skillbox::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kKey = "hardening-key-0123456789";

class Hardening : public ::testing::Test {
 protected:
  void SetUp() override {
    write_skill(tmp_.path() / "skills" / "greet", "greet", "export default () => 'hi'");
    socket_ = tmp_.path() / "api.sock";
    write_file(tmp_.path() / "serve.toml",
               "listen = [\"127.0.0.1:0\", \"unix:" + socket_.string() +
                   "\"]\nidle_timeout_ms = 1000\nheader_timeout_ms = 1000\nmax_header_bytes = "
                   "2048\n[tenants.t]\nkey_sha256 = [\"" +
                   server::key_hash_hex(server::hash_api_key(kKey)) +
                   "\"]\nskills = \"skills\"\ndata_dir = \"data\"\n");
    server_ = std::make_unique<ServeProcess>(
        std::vector<std::string>{"--config", (tmp_.path() / "serve.toml").string()});
  }

  TempDir tmp_;
  fs::path socket_;
  std::unique_ptr<ServeProcess> server_;
};

TEST_F(Hardening, PrintsAUrlPerListener) {
  ASSERT_EQ(server_->lines.size(), 2u);
  EXPECT_EQ(server_->lines[1], "url: unix:" + socket_.string());
}

TEST_F(Hardening, HeadersAboveTheCapAre431) {
  const HttpReply r =
      http("GET", server_->url + "/v1/skills", kKey, std::nullopt, {"X-Filler: " + std::string(4000, 'x')});
  EXPECT_EQ(r.status, 431);
  EXPECT_EQ(r.json()["error"]["code"], "headers_too_large");
}

TEST_F(Hardening, ASlowClientIsCutOffAndOthersAreServedMeanwhile) {
  const int slow = connect_raw(server_->url);
  ASSERT_GE(slow, 0);
  ASSERT_TRUE(send_all(slow, "GET /v1/skills HTTP/1.1\r\nHost: 127.0.0.1\r\n"));  // never finished
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(http("GET", server_->url + "/v1/skills", kKey).status, 200);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(900));
  char buf[256];
  const ssize_t n = ::read(slow, buf, sizeof buf);  // closed at the 1 s header timeout, nothing answered
  EXPECT_EQ(n, 0);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(900));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  ::close(slow);
}

TEST_F(Hardening, TheUnixSocketServesAndIsTheOwnersOnly) {
  struct stat st {};
  ASSERT_EQ(::stat(socket_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  CURL* curl = curl_easy_init();
  std::string body;
  curl_easy_setopt(curl, CURLOPT_UNIX_SOCKET_PATH, socket_.c_str());
  curl_easy_setopt(curl, CURLOPT_URL, "http://127.0.0.1/healthz");
  curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(
      curl, CURLOPT_WRITEFUNCTION, +[](char* d, size_t s, size_t n, void* u) {
        static_cast<std::string*>(u)->append(d, s * n);
        return s * n;
      });
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  ASSERT_EQ(curl_easy_perform(curl), CURLE_OK);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(curl);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(body, "{\"status\":\"ok\"}\n");
  EXPECT_EQ(server_->stop(SIGTERM), 0);
  EXPECT_FALSE(fs::exists(socket_));  // removed on exit
}

}  // namespace
}  // namespace skillbox::testing
