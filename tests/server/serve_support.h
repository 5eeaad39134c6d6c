// tests/server/serve_support.h — what the server tests share: the real `skillbox serve` started as a
// child process (as an operator starts it), an HTTP client on libcurl that talks only to 127.0.0.1, and
// temporary skill folders.
#pragma once

#include <sys/types.h>

#include <cctype>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace skillbox::testing {

/// A temporary folder, removed with everything in it.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// Writes `text` to `path`, creating the folders above it.
void write_file(const std::filesystem::path& path, const std::string& text);

/// A skill folder `dir` with skill.json {"id": id, "entry": "index.js", ...extra} and index.js = `js`.
void write_skill(const std::filesystem::path& dir, const std::string& id, const std::string& js,
                 const std::string& extra_manifest = "");

/// A skill's source: one increment of the store's "n" by compare-and-set, retried until it wins; returns
/// the value it wrote. Runs racing on one key, in any replicas, must each win exactly once.
inline constexpr const char* kIncrementSource = R"(export default () => {
  for (;;) {
    const old = store.get('n');
    const next = (old ?? 0) + 1;
    if (store.compareAndSet('n', old, next)) return next;
  }
})";

/// Whether `requests` (a loopback HttpTestServer's recorded ones) held the header `name` (any case)
/// with exactly `value`.
template <class Recorded>
bool saw_header(const Recorded& requests, const std::string& name, const std::string& value) {
  for (const auto& seen : requests) {
    for (const auto& [n, v] : seen.headers) {
      if (v != value || n.size() != name.size()) continue;
      bool same = true;
      for (size_t i = 0; i < n.size(); ++i) same = same && std::tolower(n[i]) == std::tolower(name[i]);
      if (same) return true;
    }
  }
  return false;
}

/// `skillbox serve ARGS...` running in the background. The constructor waits (up to 30 s) for the url
/// lines on stdout and fails the test when they do not come.
class ServeProcess {
 public:
  explicit ServeProcess(const std::vector<std::string>& args);
  /// SIGKILL if still running.
  ~ServeProcess();
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  /// The lines the server printed on stdout before it served.
  std::vector<std::string> lines;
  /// The first url line's URL, and the key line's key (empty when none was printed).
  std::string url;
  std::string key;

  /// Sends `signal` and waits up to 60 s for the process to exit; returns its exit code (128 + signal
  /// when killed by one).
  int stop(int signal);
  /// Sends `signal` (SIGHUP: reload) without waiting.
  void signal(int signal) const;
  /// Waits up to 60 s for stderr to hold `text` (a log line of something asynchronous, such as a reload);
  /// false when it never comes.
  [[nodiscard]] bool wait_for_err(const std::string& text) const;
  /// What the server wrote on stderr so far.
  [[nodiscard]] std::string err() const;
  /// The server's process id.
  [[nodiscard]] pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  TempDir tmp_;
};

struct HttpReply {
  long status = 0;  // 0: no response (connection refused, reset)
  std::string body;
  std::map<std::string, std::string> headers;  // names in lower case
  /// The header `name` (lower case), or "".
  [[nodiscard]] std::string header(const std::string& name) const {
    const auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
  /// The body as JSON (a discarded value when it is not).
  [[nodiscard]] nlohmann::json json() const;
};

/// A raw TCP connection to the 127.0.0.1 port of `url` ("http://127.0.0.1:PORT"): a file descriptor the
/// caller closes, or -1 (and a test failure) when it cannot connect. For what libcurl will not do:
/// half a request, or a connection closed while the server works.
/// `source`, when given, is the local address to connect from (another loopback address, 127.0.0.2, is
/// another client to the server).
int connect_raw(const std::string& url, const std::string& source = "");

/// Reads one response from `fd`: up to the end of its body (Content-Length), or to end of file, waiting
/// at most 30 s. "" when the connection closed (or was reset) before a byte of response came.
std::string read_reply(int fd);

/// Writes all of `bytes` to `fd`; false when the connection fails first.
bool send_all(int fd, const std::string& bytes);

/// One request with libcurl: the path is sent as given (CURLOPT_PATH_AS_IS: no "../" squashing), no
/// proxy, `key` as "Authorization: Bearer KEY" when not empty, `body` when set.
HttpReply http(const std::string& method, const std::string& url, const std::string& key = "",
               const std::optional<std::string>& body = std::nullopt,
               const std::vector<std::string>& headers = {});

}  // namespace skillbox::testing
