// TLS listeners of `skillbox serve` (server/tls.h, docs/server.md "TLS"): a real server with a certificate
// the test issues, reached by libcurl trusting only the test's CA, on 127.0.0.1.
#include <curl/curl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <string>

#include "serve_support.h"
#include "server/api_key.h"
#include "server/config.h"
#include "support/cli_exec.h"
#include "support/test_pki.h"

namespace skillbox::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kKey = "tls-tenant-key-0123456789";

/// What an HTTPS request got: curl's verdict (CURLE_OK when an HTTP answer came), its status and body.
struct HttpsReply {
  CURLcode code = CURLE_OK;
  long status = 0;
  std::string body;
  std::string error;  // curl's error text
};

size_t append(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

/// One request to `url`, trusting only the CA in `ca_file`; `tls12_only` caps the client at TLS 1.2.
HttpsReply https(const std::string& url, const fs::path& ca_file, const std::string& body = "",
                 bool tls12_only = false) {
  HttpsReply reply;
  char error[CURL_ERROR_SIZE] = {};
  CURL* curl = curl_easy_init();
  curl_slist* headers = curl_slist_append(nullptr, (std::string("Authorization: Bearer ") + kKey).c_str());
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, 60L);
  curl_easy_setopt(curl, CURLOPT_CAINFO, ca_file.c_str());
  curl_easy_setopt(curl, CURLOPT_CAPATH, nullptr);  // the test's CA and nothing else
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  if (tls12_only)
    curl_easy_setopt(
        curl, CURLOPT_SSLVERSION,
        static_cast<long>(CURL_SSLVERSION_TLSv1_2) | static_cast<long>(CURL_SSLVERSION_MAX_TLSv1_2));
  if (!body.empty()) curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, append);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &reply.body);
  reply.code = curl_easy_perform(curl);
  if (reply.code == CURLE_OK) curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &reply.status);
  reply.error = error;
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  return reply;
}

/// A config folder with a skill, a CA, a certificate for 127.0.0.1 and its key (0600), and serve.toml
/// with one TLS listener.
struct TlsSetup {
  TempDir tmp;
  TestCa ca{"skillbox tls test CA"};
  fs::path ca_file = tmp.path() / "ca.pem";
  fs::path config = tmp.path() / "serve.toml";

  explicit TlsSetup(const std::string& extra = "") {
    write_skill(tmp.path() / "skills" / "hello", "hello",
                "export default (input) => `hello ${input?.name ?? 'world'}`");
    write_skill(tmp.path() / "skills" / "slow", "slow",
                "export default () => new Promise((r) => setTimeout(() => r('done'), 60000))");
    write_file(ca_file, ca.cert_pem());
    issue(ca);
    write_file(config,
               "listen = [{address = \"127.0.0.1:0\", tls_cert = \"cert.pem\", tls_key = \"key.pem\"}]\n" +
                   extra + "\n[tenants.t]\nkey_sha256 = [\"" +
                   server::key_hash_hex(server::hash_api_key(kKey)) +
                   "\"]\nskills = \"skills\"\ndata_dir = \"data\"\n");
  }
  /// cert.pem and key.pem: a certificate from `issuer` for 127.0.0.1.
  void issue(const TestCa& issuer) const {
    const PemPair pair = issuer.issue({"IP:127.0.0.1"});
    write_file(tmp.path() / "cert.pem", pair.cert_pem);
    write_file(tmp.path() / "key.pem", pair.key_pem);
    ::chmod((tmp.path() / "key.pem").c_str(), 0600);
  }
};

TEST(ServeTls, RunsASkillOverHttpsForAClientThatTrustsTheCa) {
  TlsSetup setup;
  ServeProcess server({"--config", setup.config.string()});
  ASSERT_TRUE(server.url.starts_with("https://127.0.0.1:")) << server.url;

  const HttpsReply run =
      https(server.url + "/v1/skills/hello/run", setup.ca_file, R"({"input": {"name": "Ada"}})");
  ASSERT_EQ(run.code, CURLE_OK) << run.error;
  EXPECT_EQ(run.status, 200);
  const nlohmann::json result = nlohmann::json::parse(run.body, nullptr, false);
  EXPECT_EQ(result.value("outcome", ""), "ok") << run.body;
  EXPECT_EQ(result.value("value", ""), "hello Ada") << run.body;

  // Another CA's client does not accept the server: it is the test's certificate that is served.
  TestCa other("another CA");
  write_file(setup.tmp.path() / "other-ca.pem", other.cert_pem());
  const HttpsReply stranger = https(server.url + "/healthz", setup.tmp.path() / "other-ca.pem");
  EXPECT_EQ(stranger.code, CURLE_PEER_FAILED_VERIFICATION) << stranger.error;
}

TEST(ServeTls, PlainHttpToTheTlsPortGetsA400SayingToUseHttps) {
  TlsSetup setup;
  ServeProcess server({"--config", setup.config.string()});
  const int fd = connect_raw("http://" + server.url.substr(8));
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(send_all(fd, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
  const std::string reply = read_reply(fd);
  ::close(fd);
  EXPECT_TRUE(reply.starts_with("HTTP/1.1 400 ")) << reply;
  EXPECT_NE(reply.find("\"code\":\"tls_required\""), std::string::npos) << reply;
  EXPECT_NE(reply.find("https://"), std::string::npos) << reply;
}

TEST(ServeTls, AClientLimitedToTls12IsRefusedInTheHandshake) {
  TlsSetup setup;
  ServeProcess server({"--config", setup.config.string()});
  const HttpsReply old = https(server.url + "/healthz", setup.ca_file, "", true);
  EXPECT_EQ(old.code, CURLE_SSL_CONNECT_ERROR) << old.error;
  EXPECT_NE(old.error.find("protocol version"), std::string::npos) << old.error;
  EXPECT_EQ(old.status, 0);
  // The same client with 1.3 allowed is served.
  EXPECT_EQ(https(server.url + "/healthz", setup.ca_file).status, 200);
}

TEST(ServeTls, AKeyFileEveryUserCanReadIsRefusedAtStart) {
  TlsSetup setup;
  ::chmod((setup.tmp.path() / "key.pem").c_str(), 0644);
  const CliExec run = run_cli({"serve", "--config", setup.config.string()});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("tls_key " + (setup.tmp.path() / "key.pem").string()), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("mode 0644"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("chmod 600"), std::string::npos) << run.err;
}

TEST(ServeTls, AKeyOfAnotherCertificateIsRefusedAtStart) {
  TlsSetup setup;
  write_file(setup.tmp.path() / "key.pem", setup.ca.issue({"IP:127.0.0.1"}).key_pem);
  ::chmod((setup.tmp.path() / "key.pem").c_str(), 0600);
  const CliExec run = run_cli({"serve", "--config", setup.config.string()});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("tls_key"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("certificate"), std::string::npos) << run.err;
}

// A client that starts a handshake and never finishes it holds its connection for header_timeout_ms at
// most, as a slowloris client does with its headers.
TEST(ServeTls, AHandshakeThatNeverEndsIsCutOff) {
  TlsSetup setup("header_timeout_ms = 300");
  ServeProcess server({"--config", setup.config.string()});
  const int fd = connect_raw("http://" + server.url.substr(8));
  ASSERT_GE(fd, 0);
  // The first bytes of a TLS record header (handshake, TLS 1.0 record version), then nothing.
  ASSERT_TRUE(send_all(fd, std::string("\x16\x03\x01", 3)));
  pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
  ASSERT_EQ(::poll(&p, 1, 30'000), 1) << "the server kept a half-made handshake open for 30 s";
  char byte = 0;
  EXPECT_LE(::recv(fd, &byte, 1, 0), 0);  // closed (end of file or reset), with no answer
  ::close(fd);
  // And the server still serves.
  EXPECT_EQ(https(server.url + "/healthz", setup.ca_file).status, 200);
}

TEST(ServeTls, ClosingTheConnectionCancelsTheRun) {
  TlsSetup setup;
  ServeProcess server({"--config", setup.config.string()});
  CURL* curl = curl_easy_init();
  curl_slist* headers = curl_slist_append(nullptr, (std::string("Authorization: Bearer ") + kKey).c_str());
  const std::string url = server.url + "/v1/skills/slow/run";
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(curl, CURLOPT_CAINFO, setup.ca_file.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "{}");
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 1500L);  // gives up long before the skill's 60 s
  EXPECT_EQ(curl_easy_perform(curl), CURLE_OPERATION_TIMEDOUT);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);  // closes the connection (close_notify, then end of file)
  EXPECT_TRUE(server.wait_for_err("\"POST /v1/skills/slow/run\" status=200 tenant=t outcome=cancelled"))
      << server.err();
}

TEST(ServeTls, SighupLoadsTheRenewedCertificate) {
  TlsSetup setup;
  ServeProcess server({"--config", setup.config.string()});
  ASSERT_EQ(https(server.url + "/healthz", setup.ca_file).status, 200);

  TestCa renewed("renewed CA");
  setup.issue(renewed);
  write_file(setup.tmp.path() / "renewed-ca.pem", renewed.cert_pem());
  server.signal(SIGHUP);
  ASSERT_TRUE(server.wait_for_err("config reloaded")) << server.err();
  EXPECT_EQ(https(server.url + "/healthz", setup.tmp.path() / "renewed-ca.pem").status, 200);
  EXPECT_EQ(https(server.url + "/healthz", setup.ca_file).code, CURLE_PEER_FAILED_VERIFICATION);

  // A renewal gone wrong (a world-readable key) keeps the certificate in use, and says why.
  ::chmod((setup.tmp.path() / "key.pem").c_str(), 0644);
  server.signal(SIGHUP);
  ASSERT_TRUE(server.wait_for_err("keeps its certificate: tls_key")) << server.err();
  EXPECT_EQ(https(server.url + "/healthz", setup.tmp.path() / "renewed-ca.pem").status, 200);
}

TEST(ServeTlsConfig, ListenerTablesNameBothFilesAndOnlyOnTcp) {
  const auto problems = [](const std::string& listen) {
    Result<server::ServerConfig> c =
        server::parse_config("listen = [" + listen + "]\n[tenants.t]\nkey_sha256 = [\"" +
                                 std::string(64, 'a') + "\"]\nskills = \"s\"\ndata_dir = \"d\"\n",
                             "serve.toml", "/etc/skillbox");
    return c ? std::string() : c.error().message;
  };
  EXPECT_NE(problems(R"({address = "127.0.0.1:8443", tls_cert = "c.pem"})")
                .find("listen[0]: TLS needs both tls_cert (the certificate chain, PEM) and tls_key"),
            std::string::npos);
  EXPECT_NE(problems(R"({address = "unix:/run/s.sock", tls_cert = "c.pem", tls_key = "k.pem"})")
                .find("listen[0]: TLS is for IP:PORT listeners"),
            std::string::npos);
  Result<server::ServerConfig> ok = server::parse_config(
      "listen = [{address = \"127.0.0.1:8443\", tls_cert = \"c.pem\", tls_key = \"/k/k.pem\"}]\n"
      "[tenants.t]\nkey_sha256 = [\"" +
          std::string(64, 'a') + "\"]\nskills = \"s\"\ndata_dir = \"d\"\n",
      "serve.toml", "/etc/skillbox");
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->listeners[0].tls_cert, "/etc/skillbox/c.pem");  // relative to the config's folder
  EXPECT_EQ(ok->listeners[0].tls_key, "/k/k.pem");
}

}  // namespace
}  // namespace skillbox::testing
