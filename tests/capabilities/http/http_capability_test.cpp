// HttpCapability against real loopback HTTP and HTTPS servers (tests/support/http_test_server.h).
//
// "The server saw no connection" is asserted with expect_untouched(): after the refused request, a
// fresh capability (the next invocation) fetches /plain from the same server and the server must have
// accepted exactly that one connection. Accepts are FIFO, so a connection made by the refused request
// would have been counted first.
#include "capabilities/http/http_capability.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string_view>
#include <thread>

#include "support/http_test_server.h"
#include "support/scoped_env.h"
#include "support/test_pki.h"

namespace skillbox::capabilities {
namespace {

using namespace std::chrono_literals;
using skillbox::testing::HttpTestServer;
using skillbox::testing::HttpTestServerOptions;
using skillbox::testing::TestCa;

// Collects replies delivered by the I/O thread.
class RecordingSink : public bus::CompletionSink {
 public:
  void complete(uint64_t id, bus::Reply reply) override {
    std::lock_guard lock(mu_);
    replies_.emplace(id, std::move(reply));
    ++count_;
    cv_.notify_all();
  }
  std::optional<bus::Reply> wait(uint64_t id, std::chrono::milliseconds timeout = 60s) {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, timeout, [&] { return replies_.count(id) != 0; })) return std::nullopt;
    return replies_.at(id);
  }
  bool wait_count(size_t n, std::chrono::milliseconds timeout = 60s) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return count_ >= n; });
  }
  size_t count() {
    std::lock_guard lock(mu_);
    return count_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint64_t, bus::Reply> replies_;
  size_t count_ = 0;
};

// One invocation's capability with its sink and counters.
struct Client {
  explicit Client(HttpPolicy policy, HttpTuning tuning = {}, std::filesystem::path ca = {})
      : cap(std::move(policy), std::move(ca), sink, counters, std::move(tuning)) {}

  // Starts a request; returns its id, or the synchronous reply in `sync`.
  uint64_t start(bus::HttpRequest r, std::optional<bus::Reply>* sync = nullptr) {
    const uint64_t id = ++next_id;
    auto reply = cap.start(id, std::move(r));
    if (sync != nullptr) *sync = std::move(reply);
    return id;
  }
  bus::Reply fetch(bus::HttpRequest r) {
    std::optional<bus::Reply> sync;
    const uint64_t id = start(std::move(r), &sync);
    if (sync) return *sync;
    auto reply = sink.wait(id);
    EXPECT_TRUE(reply) << "no reply within 60 s";
    return reply ? *reply : bus::Reply(bus::ErrorReply{bus::ErrorCode::IoError, "test: no reply"});
  }
  bus::Reply get(const std::string& url) { return fetch(request("GET", url)); }

  static bus::HttpRequest request(std::string method, std::string url) {
    bus::HttpRequest r;
    r.method = std::move(method);
    r.url = std::move(url);
    return r;
  }

  RecordingSink sink;
  bus::BusCounters counters;
  HttpCapability cap;
  uint64_t next_id = 0;
};

// A copy, so `const auto& r = response(c.get(...))` never dangles.
bus::HttpResponseReply response(const bus::Reply& r) {
  if (auto* e = std::get_if<bus::ErrorReply>(&r)) {
    ADD_FAILURE() << "expected a response, got " << bus::error_name(e->code) << ": " << e->message;
    return {};
  }
  return std::get<bus::HttpResponseReply>(r);
}

std::string body(const bus::Reply& r) {
  const auto& resp = response(r);
  return {resp.body.begin(), resp.body.end()};
}

// "Name: message" of an error reply, or "status <n>" of a response.
std::string outcome(const bus::Reply& r) {
  if (auto* e = std::get_if<bus::ErrorReply>(&r))
    return std::string(bus::error_name(e->code)) + ": " + e->message;
  if (auto* h = std::get_if<bus::HttpResponseReply>(&r)) return "status " + std::to_string(h->status);
  return "other reply";
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

HttpPolicy loopback_policy(const std::vector<const HttpTestServer*>& servers) {
  HttpPolicy p;
  for (const auto* s : servers) p.allow.push_back(s->origin() + "/");
  p.methods = {"GET", "POST", "PUT", "DELETE", "HEAD", "PATCH", "OPTIONS"};
  p.allow_private_addresses = true;  // the test servers live on loopback
  p.timeout_ms = 30'000;
  return p;
}

// The server saw no connection before this call, and the next invocation works normally.
void expect_untouched(const HttpTestServer& server) {
  Client next(loopback_policy({&server}));
  EXPECT_EQ(body(next.get(server.url("/plain"))), "hello from the test server");
  EXPECT_EQ(server.connections(), 1u) << "the refused request reached " << server.origin();
  EXPECT_EQ(server.requests(), 1u);
}

class HttpCapabilityTest : public ::testing::Test {
 protected:
  HttpTestServer server;
  HttpTestServer other;  // a second origin: "somewhere else" for redirects and allowlist tests
};

// ---- success --------------------------------------------------------------------------------------

TEST_F(HttpCapabilityTest, GetReturnsStatusHeadersBodyAndFinalUrl) {
  Client c(loopback_policy({&server}));
  const bus::Reply r = c.get(server.url("/plain"));
  const auto& resp = response(r);
  EXPECT_EQ(resp.status, 200u);
  EXPECT_EQ(resp.status_text, "OK");
  EXPECT_EQ(body(r), "hello from the test server");
  EXPECT_EQ(resp.url, server.url("/plain"));
  bool has_type = false;
  for (const auto& [n, v] : resp.headers)
    if (n == "content-type") has_type = v == "text/plain";
  EXPECT_TRUE(has_type);
  EXPECT_EQ(c.counters.http_bytes_in.load(), 26u);
  EXPECT_EQ(c.counters.http_bytes_out.load(), 0u);
  // What went over the wire: our User-Agent, no proxy headers, no Expect.
  const auto seen = server.recorded();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].method, "GET");
  EXPECT_EQ(seen[0].target, "/plain");
  std::map<std::string, std::string> h;
  for (const auto& [n, v] : seen[0].headers) h[n] = v;
  EXPECT_TRUE(starts_with(h["User-Agent"], "skillbox/"));
  EXPECT_EQ(h["Host"], "127.0.0.1:" + std::to_string(server.port()));
}

TEST_F(HttpCapabilityTest, ResponseHeaderNamesAreLowerCasedInArrivalOrder) {
  Client c(loopback_policy({&server}));
  const auto& resp = response(c.get(server.url("/headers")));
  std::vector<std::pair<std::string, std::string>> mine;
  for (const auto& h : resp.headers)
    if (starts_with(h.first, "x-") || h.first == "set-cookie") mine.push_back(h);
  const std::vector<std::pair<std::string, std::string>> expected = {{"x-one", "1"},
                                                                     {"x-multi", "a"},
                                                                     {"x-multi", "b"},
                                                                     {"set-cookie", "a=1; Path=/"},
                                                                     {"x-mixed-case", "Yes"}};
  EXPECT_EQ(mine, expected);
}

TEST_F(HttpCapabilityTest, HttpErrorStatusesResolve) {
  Client c(loopback_policy({&server}));
  for (int code : {404, 500, 418}) {
    const bus::Reply r = c.get(server.url("/status?code=" + std::to_string(code)));
    EXPECT_EQ(response(r).status, static_cast<uint32_t>(code));
    EXPECT_EQ(response(r).status_text, "Custom Reason");
    EXPECT_EQ(body(r), "status " + std::to_string(code));
  }
}

TEST_F(HttpCapabilityTest, PostSendsExactlyTheBodyAndHeadersGiven) {
  Client c(loopback_policy({&server}));
  bus::HttpRequest r = Client::request("post", server.url("/echo"));
  const std::string payload = R"({"hello":"world"})";
  r.body.assign(payload.begin(), payload.end());
  r.headers = {{"Content-Type", "application/json"}, {"X-Trace", "  abc  "}, {"X-Empty", ""}};
  const auto echo = nlohmann::json::parse(body(c.fetch(r)));
  EXPECT_EQ(echo["method"], "POST");
  EXPECT_EQ(echo["body"], payload);
  std::map<std::string, std::string> h;
  for (const auto& pair : echo["headers"]) h[pair[0].get<std::string>()] = pair[1].get<std::string>();
  EXPECT_EQ(h["Content-Type"], "application/json");
  EXPECT_EQ(h["Content-Length"], std::to_string(payload.size()));
  EXPECT_EQ(h["X-Trace"], "abc");
  EXPECT_TRUE(h.count("X-Empty"));
  EXPECT_EQ(h["X-Empty"], "");
  EXPECT_FALSE(h.count("Expect"));
  EXPECT_EQ(c.counters.http_bytes_out.load(), payload.size());
}

TEST_F(HttpCapabilityTest, BodyWithoutContentTypeGetsNoInventedOne) {
  Client c(loopback_policy({&server}));
  bus::HttpRequest r = Client::request("PUT", server.url("/echo"));
  r.body = {'a', 'b'};
  const auto echo = nlohmann::json::parse(body(c.fetch(r)));
  EXPECT_EQ(echo["method"], "PUT");
  EXPECT_EQ(echo["body"], "ab");
  for (const auto& pair : echo["headers"]) EXPECT_NE(pair[0], "Content-Type");
}

TEST_F(HttpCapabilityTest, OtherMethodsGoOutAsGiven) {
  Client c(loopback_policy({&server}));
  EXPECT_EQ(nlohmann::json::parse(body(c.fetch(Client::request("DELETE", server.url("/echo")))))["method"],
            "DELETE");
  EXPECT_EQ(nlohmann::json::parse(body(c.fetch(Client::request("PATCH", server.url("/echo")))))["method"],
            "PATCH");
  const auto put = nlohmann::json::parse(body(c.fetch(Client::request("PUT", server.url("/echo")))));
  bool zero_length = false;
  for (const auto& pair : put["headers"]) zero_length |= pair[0] == "Content-Length" && pair[1] == "0";
  EXPECT_TRUE(zero_length) << "an empty PUT still says Content-Length: 0";
  // HEAD: a Content-Length above the cap is fine, no body is read.
  HttpPolicy small = loopback_policy({&server});
  small.max_response_bytes = 10;
  Client h(small);
  const bus::Reply head = h.fetch(Client::request("HEAD", server.url("/bytes?n=5000")));
  EXPECT_EQ(response(head).status, 200u);
  EXPECT_TRUE(response(head).body.empty());
}

TEST_F(HttpCapabilityTest, BinaryBodiesArriveByteForByte) {
  Client c(loopback_policy({&server}));
  const auto& resp = response(c.get(server.url("/binary")));
  ASSERT_EQ(resp.body.size(), 256u);
  for (size_t i = 0; i < 256; ++i) EXPECT_EQ(resp.body[i], i);
}

TEST_F(HttpCapabilityTest, GzipBodiesAreDecodedAndCountedDecoded) {
  Client c(loopback_policy({&server}));
  const auto& resp = response(c.get(server.url("/gzip?n=5000")));
  EXPECT_EQ(resp.body, bus::Bytes(5000, 0));
  EXPECT_EQ(c.counters.http_bytes_in.load(), 5000u);
  const auto seen = server.recorded();
  bool accepts_gzip = false;
  for (const auto& [n, v] : seen.at(0).headers)
    accepts_gzip |= n == "Accept-Encoding" && v.find("gzip") != std::string::npos;
  EXPECT_TRUE(accepts_gzip);
}

TEST_F(HttpCapabilityTest, ConnectionsAreReusedWithinAnInvocationButNotAcrossInvocations) {
  {
    Client c(loopback_policy({&server}));
    EXPECT_EQ(response(c.get(server.url("/plain"))).status, 200u);
    EXPECT_EQ(response(c.get(server.url("/json"))).status, 200u);
    EXPECT_EQ(server.connections(), 1u);
  }
  Client next(loopback_policy({&server}));
  EXPECT_EQ(response(next.get(server.url("/plain"))).status, 200u);
  EXPECT_EQ(server.connections(), 2u);  // a fresh invocation starts with no pooled connection
}

TEST_F(HttpCapabilityTest, ProxiesFromTheEnvironmentAreIgnored) {
  HttpTestServer proxy;
  // Declared before the client: restored only after the client (and its I/O thread) is gone.
  skillbox::testing::ScopedEnv proxy_env;
  for (const char* var : {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"})
    proxy_env.set(var, proxy.origin().c_str());
  proxy_env.set("NO_PROXY", "");
  Client c(loopback_policy({&server}));
  const bus::Reply r = c.get(server.url("/plain"));
  EXPECT_EQ(body(r), "hello from the test server");
  EXPECT_EQ(server.requests(), 1u);
  expect_untouched(proxy);
}

// ---- HTTPS ------------------------------------------------------------------------------------------

class HttpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/skillbox-https-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir = tmpl;
    ca_file = dir / "ca.pem";
    std::ofstream(ca_file) << ca.cert_pem();
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  static HttpTestServerOptions tls(const skillbox::testing::PemPair& pair) {
    HttpTestServerOptions options;
    options.tls = true;
    options.cert_pem = pair.cert_pem;
    options.key_pem = pair.key_pem;
    return options;
  }

  TestCa ca{"skillbox test CA"};
  TestCa stranger{"a CA nobody trusts"};
  std::filesystem::path dir, ca_file;
};

TEST_F(HttpsTest, VerifiesTheServerAgainstTheSystemBundlePlusTheTestCa) {
  HttpTestServer server(tls(ca.issue({"IP:127.0.0.1", "DNS:localhost"})));
  Client c(loopback_policy({&server}), {}, ca_file);
  const bus::Reply r = c.get(server.url("/json"));
  EXPECT_EQ(body(r), R"({"ok":true,"n":42,"s":"caf\u00e9"})");
  EXPECT_TRUE(starts_with(response(r).url, "https://127.0.0.1:"));
}

TEST_F(HttpsTest, RefusesUntrustedWrongNameAndUnconfiguredCertificates) {
  HttpTestServer untrusted(tls(stranger.issue({"IP:127.0.0.1"})));
  HttpTestServer wrong_name(tls(ca.issue({"DNS:somewhere-else.example"})));
  HttpTestServer good(tls(ca.issue({"IP:127.0.0.1"})));
  for (const auto& [server, ca_path] : {std::pair{&untrusted, ca_file}, std::pair{&wrong_name, ca_file},
                                        std::pair{&good, std::filesystem::path()}}) {
    Client c(loopback_policy({server}), {}, ca_path);
    const std::string o = outcome(c.get(server->url("/plain")));
    EXPECT_TRUE(starts_with(o, "NetworkError: http: request to " + server->origin() + "/plain failed: "))
        << o;
    EXPECT_EQ(o.find(".pem"), std::string::npos) << "no host paths in messages: " << o;
    EXPECT_EQ(o.find("/etc/"), std::string::npos) << o;
    EXPECT_EQ(server->requests(), 0u) << "no request may be sent over an unverified connection";
  }
  // The next invocation, properly configured, works.
  Client next(loopback_policy({&good}), {}, ca_file);
  EXPECT_EQ(response(next.get(good.url("/plain"))).status, 200u);
}

TEST_F(HttpsTest, AnUnreadableExtraCaFailsClosedWithoutNamingThePath) {
  HttpTestServer server(tls(ca.issue({"IP:127.0.0.1"})));
  Client c(loopback_policy({&server}), {}, dir / "missing.pem");
  EXPECT_EQ(outcome(c.get(server.url("/plain"))),
            "NetworkError: http: the host's extra CA certificate could not be read");
  EXPECT_EQ(server.connections(), 0u);
}

// ---- refusals before any connection -----------------------------------------------------------------

TEST_F(HttpCapabilityTest, RefusesSchemesOtherThanHttpAndHttpsSynchronously) {
  HttpPolicy p = loopback_policy({&server});
  Client c(p);
  for (const char* url :
       {"file:///etc/passwd", "gopher://127.0.0.1:70/_x", "ftp://127.0.0.1/", "dict://127.0.0.1/"}) {
    std::optional<bus::Reply> sync;
    c.start(Client::request("GET", url), &sync);
    ASSERT_TRUE(sync) << url << " must be refused before the I/O thread";
    EXPECT_TRUE(starts_with(outcome(*sync), "PermissionDenied: http: scheme \"")) << outcome(*sync);
  }
  EXPECT_EQ(c.sink.count(), 0u);
  expect_untouched(server);
}

TEST_F(HttpCapabilityTest, RefusesOddUrlInput) {
  Client c(loopback_policy({&server}));
  const std::string o = server.origin();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {" " + o + "/plain", "InvalidArgument: http: url contains a space or control character at offset 0"},
      {"\t" + o + "/plain", "InvalidArgument: http: url contains a space or control character at offset 0"},
      {o + "/plain\r\nX-Injected: 1", "InvalidArgument: http: url contains a space or control character"},
      {o + "/pl ain", "InvalidArgument: http: url contains a space or control character"},
      {o + "/plain" + std::string(1, '\0') + "/../../x",
       "InvalidArgument: http: url contains a space or control"},
      {o + "/" + std::string(9000, 'a'), "InvalidArgument: http: url is 9"},
      {"http://user:pw@127.0.0.1:" + std::to_string(server.port()) + "/plain",
       "PermissionDenied: http: url contains userinfo"},
      {"http://%C3%A9.example/", "InvalidArgument: http: url has a host that is not plain ASCII"},
      {"http://caf\xc3\xa9.example/", "InvalidArgument: http: url contains a non-ASCII byte"},
      {"//127.0.0.1/", "InvalidArgument: http: url must be absolute"},
  };
  for (const auto& [url, expected] : cases) {
    std::optional<bus::Reply> sync;
    c.start(Client::request("GET", url), &sync);
    ASSERT_TRUE(sync) << url;
    EXPECT_TRUE(starts_with(outcome(*sync), expected)) << outcome(*sync);
  }
  expect_untouched(server);
}

TEST_F(HttpCapabilityTest, RefusesUrlsOutsideTheAllowlist) {
  HttpPolicy p = loopback_policy({&server});
  p.allow = {server.origin() + "/json"};
  Client c(p);
  EXPECT_EQ(outcome(c.get(other.url("/plain"))),
            "PermissionDenied: http: " + other.origin() + "/plain is not in permissions.http.allow");
  EXPECT_EQ(outcome(c.get(server.url("/plain"))),
            "PermissionDenied: http: " + server.origin() + "/plain is not in permissions.http.allow");
  EXPECT_EQ(outcome(c.get(server.url("/jsonx"))),
            "PermissionDenied: http: " + server.origin() + "/jsonx is not in permissions.http.allow");
  EXPECT_EQ(outcome(c.get("https://127.0.0.1:" + std::to_string(server.port()) + "/json")),
            "PermissionDenied: http: https://127.0.0.1:" + std::to_string(server.port()) +
                "/json is not in permissions.http.allow");
  EXPECT_EQ(server.connections(), 0u);
  EXPECT_EQ(response(c.get(server.url("/json?x=1"))).status, 200u);  // the prefix itself is allowed
  EXPECT_EQ(server.requests(), 1u);
  expect_untouched(other);
}

TEST_F(HttpCapabilityTest, NoAllowlistMeansNoRequest) {
  HttpPolicy p = loopback_policy({&server});
  p.allow.clear();
  Client c(p);
  EXPECT_EQ(
      outcome(c.get(server.url("/plain"))),
      "PermissionDenied: http: no network access is granted (permissions.http.allow has no valid entry)");
  expect_untouched(server);
}

TEST_F(HttpCapabilityTest, RefusesMethodsAndHeadersThePolicyDoesNotAllow) {
  HttpPolicy p = loopback_policy({&server});
  p.methods = {"GET"};
  Client c(p);
  const std::string u = server.url("/echo");
  EXPECT_EQ(outcome(c.fetch(Client::request("DELETE", u))),
            "PermissionDenied: http: method DELETE is not in permissions.http.methods");
  EXPECT_EQ(outcome(c.fetch(Client::request("CONNECT", u))),
            "InvalidArgument: http: method CONNECT is never allowed");
  EXPECT_EQ(outcome(c.fetch(Client::request("GET\r\nX", u))).rfind("InvalidArgument: http: method", 0), 0u);
  const std::vector<std::pair<std::string, std::string>> bad_headers = {
      {"Host", "evil.example"},           {"X-A", "1\r\nHost: evil.example"},
      {"Transfer-Encoding", "chunked"},   {"Connection", "Upgrade"},
      {"Proxy-Authorization", "Basic x"}, {"Content-Length", "0"},
      {"X-A", std::string("a\0b", 3)},    {"Bad Name", "x"}};
  for (const auto& h : bad_headers) {
    bus::HttpRequest r = Client::request("GET", u);
    r.headers = {h};
    EXPECT_TRUE(starts_with(outcome(c.fetch(r)), "InvalidArgument: http: request header")) << h.first;
  }
  bus::HttpRequest with_body = Client::request("GET", u);
  with_body.body = {'x'};
  EXPECT_EQ(outcome(c.fetch(with_body)), "InvalidArgument: http: a GET request cannot have a body");
  bus::HttpRequest zero = Client::request("GET", u);
  zero.timeout_ms = 0;
  EXPECT_EQ(outcome(c.fetch(zero)), "InvalidArgument: http: timeoutMs must be at least 1");
  expect_untouched(server);
}

TEST_F(HttpCapabilityTest, RequestBodyAboveTheCapIsRefused) {
  HttpPolicy p = loopback_policy({&server});
  p.max_request_bytes = 100;
  Client c(p);
  bus::HttpRequest r = Client::request("POST", server.url("/echo"));
  r.body.assign(101, 'b');
  EXPECT_EQ(
      outcome(c.fetch(r)),
      "PayloadTooLarge: http: request body is 101 bytes, more than 100 (permissions.http.max_request_bytes)");
  EXPECT_EQ(c.counters.http_bytes_out.load(), 0u);
  expect_untouched(server);
  r.body.assign(100, 'b');
  EXPECT_EQ(nlohmann::json::parse(body(c.fetch(r)))["body"], std::string(100, 'b'));
}

TEST_F(HttpCapabilityTest, TotalRequestsPerInvocationAreCapped) {
  HttpPolicy p = loopback_policy({&server});
  p.max_requests = 2;
  Client c(p);
  EXPECT_EQ(response(c.get(server.url("/plain"))).status, 200u);
  EXPECT_EQ(outcome(c.get("file:///x")).rfind("PermissionDenied", 0), 0u);  // refusals do not count
  EXPECT_EQ(response(c.get(server.url("/plain"))).status, 200u);
  EXPECT_EQ(
      outcome(c.get(server.url("/plain"))),
      "QuotaExceeded: http: this invocation already made 2 requests (permissions.http.max_requests is 2)");
  EXPECT_EQ(server.requests(), 2u);
  Client next(p);  // the count belongs to the invocation
  EXPECT_EQ(response(next.get(server.url("/plain"))).status, 200u);
}

// ---- connect-time address checks --------------------------------------------------------------------

// Every spelling of a loopback/unspecified address reaches the I/O thread (the allowlist permits it)
// and is refused by the open-socket callback on the address libcurl is about to connect to. The same
// URLs succeed with allow_private_addresses, which shows the refusal came from that check alone.
TEST_F(HttpCapabilityTest, AlternateIpSpellingsAreRefusedOnTheConnectedAddress) {
  const std::string port = std::to_string(server.port());
  HttpPolicy p = loopback_policy({&server});
  p.allow = {"http://127.0.0.1:" + port + "/", "http://0.0.0.0:" + port + "/",
             "http://[::ffff:127.0.0.1]:" + port + "/", "http://localhost:" + port + "/",
             // Code-built policies use the manifest's entry grammar (one parser): a wildcard needs two
             // labels after it, so the subdomain of localhost is listed by name.
             "http://anything.localhost:" + port + "/"};
  p.allow_private_addresses = false;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"http://2130706433:" + port + "/plain", "a loopback address"},
      {"http://0x7f000001:" + port + "/plain", "a loopback address"},
      {"http://0177.0.0.1:" + port + "/plain", "a loopback address"},
      {"http://127.1:" + port + "/plain", "a loopback address"},
      {"http://0:" + port + "/plain", "an unspecified (0.0.0.0/8) address"},
      {"http://[::ffff:127.0.0.1]:" + port + "/plain", "an IPv4-mapped IPv6 address"},
      {"http://localhost:" + port + "/plain", ""},  // ::1 or 127.0.0.1, whichever curl tries
      {"http://anything.localhost:" + port + "/plain", ""},
  };
  Client refused(p);
  for (const auto& [url, why] : cases) {
    std::optional<bus::Reply> sync;
    const uint64_t id = refused.start(Client::request("GET", url), &sync);
    ASSERT_FALSE(sync) << url << " should pass the allowlist and be refused at connect time";
    const auto reply = refused.sink.wait(id);
    ASSERT_TRUE(reply);
    const std::string o = outcome(*reply);
    EXPECT_TRUE(starts_with(o, "PermissionDenied: http: refused to connect to ")) << url << " -> " << o;
    EXPECT_NE(o.find("it resolved to " + why), std::string::npos) << o;
    EXPECT_NE(o.find("permissions.http.allow_private_addresses"), std::string::npos) << o;
  }
  EXPECT_EQ(server.connections(), 0u);

  p.allow_private_addresses = true;
  Client allowed(p);
  for (const auto& [url, why] : cases) EXPECT_EQ(outcome(allowed.get(url)), "status 200") << url;
  EXPECT_EQ(server.requests(), cases.size());
}

TEST_F(HttpCapabilityTest, CloudMetadataAddressIsRefusedAtConnectTime) {
  HttpPolicy p;
  p.allow = {"http://169.254.169.254/"};
  Client c(p);
  std::optional<bus::Reply> sync;
  const uint64_t id = c.start(Client::request("GET", "http://169.254.169.254/latest/meta-data/"), &sync);
  ASSERT_FALSE(sync);
  EXPECT_EQ(
      outcome(*c.sink.wait(id)),
      "PermissionDenied: http: refused to connect to 169.254.169.254: it resolved to a link-local address; "
      "connecting to private addresses needs permissions.http.allow_private_addresses");
}

TEST_F(HttpCapabilityTest, NamesResolvingToPrivateAddressesAreRefused) {
  // A DNS answer (here pinned with CURLOPT_RESOLVE) pointing at an internal address, as in DNS
  // rebinding: the check sees the address, not the name.
  const std::string port = std::to_string(server.port());
  HttpPolicy p = loopback_policy({&server});
  p.allow = {"http://internal.example:" + port + "/"};
  p.allow_private_addresses = false;
  HttpTuning tuning;
  tuning.resolve = {"internal.example:" + port + ":127.0.0.1"};
  Client c(p, tuning);
  EXPECT_TRUE(starts_with(
      outcome(c.get("http://internal.example:" + port + "/plain")),
      "PermissionDenied: http: refused to connect to internal.example: it resolved to a loopback"));
  expect_untouched(server);
  p.allow_private_addresses = true;
  Client allowed(p, tuning);
  EXPECT_EQ(body(allowed.get("http://internal.example:" + port + "/plain")), "hello from the test server");
}

TEST_F(HttpCapabilityTest, Ipv6LoopbackIsRefusedUnlessAllowed) {
  HttpTestServerOptions options;
  options.ipv6 = true;
  HttpTestServer v6(options);
  HttpPolicy p = loopback_policy({&v6});
  p.allow_private_addresses = false;
  Client c(p);
  EXPECT_TRUE(
      starts_with(outcome(c.get(v6.url("/plain"))),
                  "PermissionDenied: http: refused to connect to [::1]: it resolved to a loopback address"));
  expect_untouched(v6);
}

// ---- docs/security.md, Network: parser confusion -----------------------------------------------------

// allowed.example and evil.example are pinned to two loopback servers and private addresses are
// allowed, so the URL checks and the allowlist are the only defence being tested.
TEST_F(HttpCapabilityTest, ParserConfusionNeverReachesTheOtherHost) {
  const std::string ap = std::to_string(server.port());
  const std::string ep = std::to_string(other.port());
  HttpPolicy p = loopback_policy({});
  p.allow = {"http://allowed.example:" + ap + "/"};
  HttpTuning tuning;
  tuning.resolve = {"allowed.example:" + ap + ":127.0.0.1", "evil.example:" + ep + ":127.0.0.1",
                    "allowed.example.evil.example:" + ep + ":127.0.0.1"};
  Client c(p, tuning);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"http://allowed.example:" + ap + "\\@evil.example:" + ep + "/",
       "InvalidArgument: http: url contains a backslash"},
      {"http://allowed.example:" + ap + "@evil.example:" + ep + "/",
       "PermissionDenied: http: url contains userinfo"},
      {"http://allowed.example@evil.example:" + ep + "/", "PermissionDenied: http: url contains userinfo"},
      {"http://evil.example:" + ep + "#@allowed.example:" + ap + "/",
       "PermissionDenied: http: http://evil.example:" + ep + "/ is not in permissions.http.allow"},
      {"http://allowed.example.evil.example:" + ep + "/",
       "PermissionDenied: http: http://allowed.example.evil.example:" + ep +
           "/ is not in permissions.http.allow"},
      {"http://" + std::string(100000, '@') + "allowed.example:" + ap + "/",
       "InvalidArgument: http: url is " + std::to_string(7 + 100000 + 16 + ap.size() + 1) +
           " bytes long; the limit is 8192 bytes"},
  };
  for (const auto& [url, expected] : cases) {
    std::optional<bus::Reply> sync;
    c.start(Client::request("GET", url), &sync);
    ASSERT_TRUE(sync) << "refused before any connection, synchronously: " << url.substr(0, 80);
    EXPECT_TRUE(starts_with(outcome(*sync), expected)) << outcome(*sync);
  }
  // The pins work: the allowed host is reachable and is the first server.
  EXPECT_EQ(body(c.get("http://allowed.example:" + ap + "/plain")), "hello from the test server");
  EXPECT_EQ(server.requests(), 1u);
  expect_untouched(other);
}

// ---- redirects ------------------------------------------------------------------------------------

std::string encode(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '/' || c == '.' || c == '-' || c == '_') {
      out.push_back(static_cast<char>(c));
    } else {
      constexpr std::string_view kHex = "0123456789ABCDEF";
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
  }
  return out;
}

TEST_F(HttpCapabilityTest, RedirectsToAllowedUrlsAreFollowedBySkillbox) {
  Client c(loopback_policy({&server, &other}));
  const bus::Reply same = c.get(server.url("/redirect?to=/json"));
  EXPECT_EQ(response(same).status, 200u);
  EXPECT_EQ(response(same).url, server.url("/json"));
  const bus::Reply cross = c.get(server.url("/redirect?code=301&to=" + encode(other.url("/plain"))));
  EXPECT_EQ(body(cross), "hello from the test server");
  EXPECT_EQ(response(cross).url, other.url("/plain"));
  EXPECT_EQ(server.requests(), 3u);
  EXPECT_EQ(other.requests(), 1u);
}

TEST_F(HttpCapabilityTest, EachHopTellsItsOriginWithoutPathOrQuery) {
  std::mutex m;
  std::vector<std::string> hops;
  HttpTuning tuning;
  tuning.on_hop = [&](const std::string& origin) {
    const std::lock_guard<std::mutex> lock(m);
    hops.push_back(origin);
  };
  Client c(loopback_policy({&server, &other}), tuning);
  EXPECT_EQ(body(c.get(server.url("/redirect?to=" + encode(other.url("/plain?q=1"))))),
            "hello from the test server");
  // A request the policy refuses never begins a hop.
  EXPECT_TRUE(std::holds_alternative<bus::ErrorReply>(c.get("http://203.0.113.9/plain")));
  const std::lock_guard<std::mutex> lock(m);
  EXPECT_EQ(hops, (std::vector<std::string>{server.origin(), other.origin()}));
}

TEST_F(HttpCapabilityTest, CredentialsDoNotFollowACrossOriginRedirect) {
  Client c(loopback_policy({&server, &other}));
  bus::HttpRequest r = Client::request("GET", server.url("/redirect?to=" + encode(other.url("/echo"))));
  r.headers = {{"Authorization", "Bearer secret"}, {"Cookie", "s=1"}, {"X-Keep", "yes"}};
  auto echo = nlohmann::json::parse(body(c.fetch(r)));
  std::map<std::string, std::string> h;
  for (const auto& pair : echo["headers"]) h[pair[0].get<std::string>()] = pair[1].get<std::string>();
  EXPECT_FALSE(h.count("Authorization"));
  EXPECT_FALSE(h.count("Cookie"));
  EXPECT_EQ(h["X-Keep"], "yes");
  r.url = server.url("/redirect?to=/echo");  // same origin: kept
  echo = nlohmann::json::parse(body(c.fetch(r)));
  h.clear();
  for (const auto& pair : echo["headers"]) h[pair[0].get<std::string>()] = pair[1].get<std::string>();
  EXPECT_EQ(h["Authorization"], "Bearer secret");
}

TEST_F(HttpCapabilityTest, RedirectMethodRewritingFollowsBrowsers) {
  Client c(loopback_policy({&server}));
  auto post_through = [&](int code) {
    bus::HttpRequest r =
        Client::request("POST", server.url("/redirect?code=" + std::to_string(code) + "&to=/echo"));
    r.body = {'h', 'i'};
    r.headers = {{"Content-Type", "text/plain"}};
    return nlohmann::json::parse(body(c.fetch(r)));
  };
  for (int code : {301, 302, 303}) {
    const auto echo = post_through(code);
    EXPECT_EQ(echo["method"], "GET") << code;
    EXPECT_EQ(echo["body"], "") << code;
    for (const auto& pair : echo["headers"]) EXPECT_NE(pair[0], "Content-Type") << code;
  }
  for (int code : {307, 308}) {
    const auto echo = post_through(code);
    EXPECT_EQ(echo["method"], "POST") << code;
    EXPECT_EQ(echo["body"], "hi") << code;
  }
  // A 303 of a PUT becomes GET too; a policy without GET refuses that hop.
  HttpPolicy no_get = loopback_policy({&server});
  no_get.methods = {"PUT"};
  Client strict(no_get);
  EXPECT_EQ(outcome(strict.fetch(Client::request("PUT", server.url("/redirect?code=303&to=/echo")))),
            "PermissionDenied: http: redirect from " + server.origin() +
                "/redirect refused: method GET is not in permissions.http.methods");
}

TEST_F(HttpCapabilityTest, RedirectHopsAreCheckedAgainstTheAllowlist) {
  Client c(loopback_policy({&server}));
  const std::string from = "PermissionDenied: http: redirect from " + server.origin() + "/redirect refused: ";
  EXPECT_EQ(outcome(c.get(server.url("/redirect?to=" + encode(other.url("/plain"))))),
            from + other.origin() + "/plain is not in permissions.http.allow");
  EXPECT_EQ(outcome(c.get(server.url("/redirect?to=" + encode("http://169.254.169.254/latest/meta-data/")))),
            from + "http://169.254.169.254/latest/meta-data/ is not in permissions.http.allow");
  EXPECT_EQ(outcome(c.get(server.url("/redirect?to=" + encode("http://127.0.0.1:22/")))),
            from + "http://127.0.0.1:22/ is not in permissions.http.allow");
  EXPECT_EQ(outcome(c.get(server.url("/redirect?to=" + encode("file:///etc/passwd")))),
            from + "redirect location has scheme \"file:\"; only http: and https: URLs can be requested");
  EXPECT_EQ(outcome(c.get(server.url("/redirect?to=" + encode("gopher://127.0.0.1:70/_x")))),
            from + "redirect location has scheme \"gopher:\"; only http: and https: URLs can be requested");
  EXPECT_TRUE(starts_with(outcome(c.get(server.url("/redirect?to=" + encode("/a b")))),
                          "InvalidArgument: http: redirect from " + server.origin() +
                              "/redirect refused: redirect location contains a space"));
  EXPECT_TRUE(starts_with(outcome(c.get(server.url("/redirect?to=" + encode("http://u:p@127.0.0.1/")))),
                          from + "redirect location contains userinfo"));
  EXPECT_EQ(server.requests(), 7u);
  expect_untouched(other);
}

// The first hop is on a server standing in for a public host (exempt endpoint); the hop it redirects
// to is allowlisted, so only the connect-time check on that hop can stop it.
TEST_F(HttpCapabilityTest, RedirectHopsAreCheckedAtConnectTimeToo) {
  HttpPolicy p = loopback_policy({&server, &other});
  p.allow.push_back("http://169.254.169.254/");
  p.allow_private_addresses = false;
  HttpTuning tuning;
  tuning.exempt_endpoints = {"127.0.0.1:" + std::to_string(server.port())};
  Client c(p, tuning);
  EXPECT_EQ(body(c.get(server.url("/plain"))), "hello from the test server");  // the exemption works
  // `other` stands for 127.0.0.1:22: an internal service behind an allowed-looking redirect.
  EXPECT_EQ(outcome(c.get(server.url("/redirect?to=" + encode(other.url("/plain"))))),
            "PermissionDenied: http: refused to connect to 127.0.0.1: it resolved to a loopback address; "
            "connecting to private addresses needs permissions.http.allow_private_addresses");
  EXPECT_EQ(
      outcome(c.get(server.url("/redirect?to=" + encode("http://169.254.169.254/latest/meta-data/")))),
      "PermissionDenied: http: refused to connect to 169.254.169.254: it resolved to a link-local address; "
      "connecting to private addresses needs permissions.http.allow_private_addresses");
  // Another spelling of the exempt server itself is a different socket address and stays refused.
  EXPECT_TRUE(starts_with(
      outcome(c.get(server.url("/redirect?to=" + encode("http://[::ffff:127.0.0.1]:" +
                                                        std::to_string(server.port()) + "/plain")))),
      "PermissionDenied: http: redirect from"));
  expect_untouched(other);
}

TEST_F(HttpCapabilityTest, RedirectChainsAreCappedAtMaxRedirects) {
  HttpPolicy p = loopback_policy({&server});
  p.max_redirects = 3;
  Client c(p);
  EXPECT_EQ(body(c.get(server.url("/chain?n=3"))), "end of chain");
  EXPECT_EQ(server.requests(), 4u);
  EXPECT_EQ(outcome(c.get(server.url("/chain?n=4"))),
            "NetworkError: http: too many redirects (permissions.http.max_redirects is 3)");
  EXPECT_EQ(server.requests(), 8u);  // the first request and 3 hops, never the 5th
  p.max_redirects = 0;
  Client none(p);
  EXPECT_EQ(outcome(none.get(server.url("/chain?n=1"))),
            "NetworkError: http: too many redirects (permissions.http.max_redirects is 0)");
}

// ---- response caps --------------------------------------------------------------------------------

TEST_F(HttpCapabilityTest, DeclaredLengthAboveTheCapIsRefusedBeforeTheBody) {
  HttpPolicy p = loopback_policy({&server});
  p.max_response_bytes = 1000;
  Client c(p);
  EXPECT_EQ(outcome(c.get(server.url("/declared?n=1000000000"))),
            "PayloadTooLarge: http: response declares Content-Length 1000000000, more than 1000 bytes "
            "(permissions.http.max_response_bytes)");
  EXPECT_EQ(c.counters.http_bytes_in.load(), 0u);
  EXPECT_TRUE(server.wait_until([&] { return server.client_closes() == 1; }))
      << "the transfer must be aborted";
}

TEST_F(HttpCapabilityTest, TheCapIsInclusive) {
  HttpPolicy p = loopback_policy({&server});
  p.max_response_bytes = 1000;
  Client c(p);
  EXPECT_EQ(response(c.get(server.url("/bytes?n=1000"))).body.size(), 1000u);
  EXPECT_EQ(response(c.get(server.url("/bytes?n=1000&chunked=1"))).body.size(), 1000u);
  EXPECT_TRUE(starts_with(outcome(c.get(server.url("/bytes?n=1001"))),
                          "PayloadTooLarge: http: response declares Content-Length 1001"));
  EXPECT_EQ(
      outcome(c.get(server.url("/bytes?n=1001&chunked=1"))),
      "PayloadTooLarge: http: response body is larger than 1000 bytes (permissions.http.max_response_bytes)");
}

TEST_F(HttpCapabilityTest, EndlessChunkedBodyIsCutAtTheCap) {
  HttpPolicy p = loopback_policy({&server});
  p.max_response_bytes = 1 << 20;
  Client c(p);
  EXPECT_EQ(outcome(c.get(server.url("/forever"))),
            "PayloadTooLarge: http: response body is larger than 1048576 bytes "
            "(permissions.http.max_response_bytes)");
  EXPECT_LE(c.counters.http_bytes_in.load(), 1u << 20);
  EXPECT_TRUE(server.wait_until([&] { return server.client_closes() == 1; }));
}

TEST_F(HttpCapabilityTest, CompressedBodyThatExpandsPastTheCapIsCut) {
  HttpPolicy p = loopback_policy({&server});
  p.max_response_bytes = 1 << 20;
  Client c(p);
  // ~50 KB on the wire, 64 MiB decoded.
  EXPECT_EQ(outcome(c.get(server.url("/gzip?n=67108864"))),
            "PayloadTooLarge: http: response body is larger than 1048576 bytes "
            "(permissions.http.max_response_bytes)");
  EXPECT_LE(c.counters.http_bytes_in.load(), 1u << 20);
  EXPECT_EQ(response(c.get(server.url("/gzip?n=1048576"))).body.size(), 1u << 20);  // exactly the cap decodes
}

// ---- timeouts -------------------------------------------------------------------------------------

TEST_F(HttpCapabilityTest, SilentServerTimesOutAndIsDisconnected) {
  Client c(loopback_policy({&server}));
  bus::HttpRequest r = Client::request("GET", server.url("/hang"));
  r.timeout_ms = 300;
  EXPECT_EQ(outcome(c.fetch(r)),
            "Timeout: http: request timed out after 300 ms (timeoutMs, at most permissions.http.timeout_ms)");
  EXPECT_TRUE(server.wait_until([&] { return server.client_closes() == 1; }));
}

TEST_F(HttpCapabilityTest, RequestTimeoutIsLoweredToThePolicyNeverRaised) {
  HttpPolicy p = loopback_policy({&server});
  p.timeout_ms = 300;
  Client c(p);
  bus::HttpRequest r = Client::request("GET", server.url("/hang"));
  r.timeout_ms = 600'000;
  EXPECT_EQ(outcome(c.fetch(r)),
            "Timeout: http: request timed out after 300 ms (timeoutMs, at most permissions.http.timeout_ms)");
}

TEST_F(HttpCapabilityTest, DrippingServerHitsTheTotalTimeout) {
  HttpPolicy p = loopback_policy({&server});
  p.timeout_ms = 800;
  Client c(p);
  EXPECT_EQ(outcome(c.get(server.url("/drip?interval_ms=50"))),
            "Timeout: http: request timed out after 800 ms (timeoutMs, at most permissions.http.timeout_ms)");
  EXPECT_TRUE(server.wait_until([&] { return server.client_closes() == 1; }));
}

TEST_F(HttpCapabilityTest, DrippingServerHitsTheLowSpeedLimit) {
  HttpTuning tuning;
  tuning.low_speed_bytes_per_sec = 1000;
  tuning.low_speed_time_s = 1;
  Client c(loopback_policy({&server}), tuning);  // total timeout 30 s
  EXPECT_EQ(outcome(c.get(server.url("/drip?interval_ms=100"))),
            "Timeout: http: transfer from 127.0.0.1 was slower than 1000 bytes/s for 1 s (low-speed limit)");
  EXPECT_TRUE(server.wait_until([&] { return server.client_closes() == 1; }));
}

// ---- concurrency and cancellation ------------------------------------------------------------------

TEST_F(HttpCapabilityTest, RequestsOfOneInvocationRunAtTheSameTime) {
  HttpPolicy p = loopback_policy({&server});
  p.max_concurrent = 4;
  Client c(p);
  std::vector<uint64_t> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(c.start(Client::request("GET", server.url("/barrier?n=4"))));
  // The barrier only opens when the server holds all four requests at once.
  for (uint64_t id : ids) EXPECT_EQ(body(*c.sink.wait(id)), "met 4");
  EXPECT_EQ(server.peak_in_flight(), 4u);
}

TEST_F(HttpCapabilityTest, RequestsAboveTheConcurrencyCapWaitTheirTurn) {
  HttpPolicy p = loopback_policy({&server});
  p.max_concurrent = 2;
  Client c(p);
  std::vector<uint64_t> ids;
  for (int i = 0; i < 6; ++i) {
    std::optional<bus::Reply> sync;
    ids.push_back(c.start(Client::request("GET", server.url("/gate")), &sync));
    EXPECT_FALSE(sync) << "queued, not refused";
  }
  ASSERT_TRUE(server.wait_until([&] { return server.in_flight() >= 2; }));
  for (size_t done = 1; done <= ids.size(); ++done) {
    server.open_gate(1);
    ASSERT_TRUE(c.sink.wait_count(done));
    if (done + 2 <= ids.size()) {
      ASSERT_TRUE(server.wait_until([&] { return server.in_flight() >= 2; }));
    }
  }
  for (uint64_t id : ids) EXPECT_EQ(body(*c.sink.wait(id)), "through the gate");
  EXPECT_EQ(server.peak_in_flight(), 2u);
  EXPECT_EQ(server.requests(), 6u);
}

TEST_F(HttpCapabilityTest, CancelAllAbortsPendingAndQueuedRequestsWithoutCompletions) {
  HttpPolicy p = loopback_policy({&server});
  p.max_concurrent = 3;
  Client c(p);
  const uint64_t done = c.start(Client::request("GET", server.url("/plain")));
  ASSERT_TRUE(c.sink.wait(done));
  for (int i = 0; i < 5; ++i) c.start(Client::request("GET", server.url("/hang")));
  ASSERT_TRUE(server.wait_until([&] { return server.in_flight() == 3; }));
  c.cap.cancel_all();
  EXPECT_EQ(c.sink.count(), 1u);  // only the request that finished before
  EXPECT_TRUE(server.wait_until([&] { return server.client_closes() == 3; })) << "connections must be closed";
  EXPECT_EQ(server.requests(), 4u);  // the two queued ones never went out
  EXPECT_EQ(c.sink.count(), 1u);
  std::optional<bus::Reply> sync;
  c.start(Client::request("GET", server.url("/plain")), &sync);
  ASSERT_TRUE(sync);
  EXPECT_EQ(outcome(*sync), "NetworkError: http: the invocation has ended; no new requests can start");
  c.cap.cancel_all();  // idempotent
}

TEST_F(HttpCapabilityTest, DestroyingTheCapabilityCancelsItsRequests) {
  {
    Client c(loopback_policy({&server}));
    c.start(Client::request("GET", server.url("/hang")));
    ASSERT_TRUE(server.wait_until([&] { return server.in_flight() == 1; }));
  }
  EXPECT_TRUE(server.wait_until([&] { return server.client_closes() == 1; }));
}

// A completion being delivered when cancel_all() is called finishes before cancel_all() returns.
TEST_F(HttpCapabilityTest, CancelAllWaitsForACompletionInProgress) {
  struct BlockingSink : bus::CompletionSink {
    std::mutex mu;
    std::condition_variable cv;
    bool entered = false, release = false, returned = false;
    void complete(uint64_t, bus::Reply) override {
      std::unique_lock lock(mu);
      entered = true;
      cv.notify_all();
      cv.wait(lock, [&] { return release; });
      returned = true;
    }
  } sink;
  bus::BusCounters counters;
  HttpCapability cap(loopback_policy({&server}), {}, sink, counters);
  cap.start(1, Client::request("GET", server.url("/plain")));
  {
    std::unique_lock lock(sink.mu);
    ASSERT_TRUE(sink.cv.wait_for(lock, 60s, [&] { return sink.entered; }));
  }
  std::atomic<bool> cancel_returned{false};
  std::thread canceller([&] {
    cap.cancel_all();
    cancel_returned = true;
  });
  std::this_thread::sleep_for(200ms);  // give a wrong cancel_all() the chance to return early
  EXPECT_FALSE(cancel_returned.load());
  {
    std::lock_guard lock(sink.mu);
    sink.release = true;
    sink.cv.notify_all();
  }
  canceller.join();
  EXPECT_TRUE(sink.returned);
}

}  // namespace
}  // namespace skillbox::capabilities
