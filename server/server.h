// server/server.h — `skillbox serve` as one object: the public face of the server layer, used by the
// CLI (cli/serve_command.cpp).
//
//   Result<ServerConfig> config = load_config("serve.toml");
//   Result<std::unique_ptr<Server>> server = Server::start(std::move(*config));
//   for (const std::string& url : (*server)->urls()) std::cout << "url: " << url << "\n";
//   (*server)->run();   // until SIGINT or SIGTERM, then drains and returns
//
// One Runner (a WorkerRunner, or an InProcessRunner for isolation "inprocess") serves every tenant;
// each run carries its tenant's TenantContext (skillbox/tenant.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "server/config.h"
#include "skillbox/result.h"

namespace skillbox::server {

class Server {
 public:
  /// Checks `config` (config_problems), checks that process isolation can run when it is asked for,
  /// and binds every listener. Errors say what is wrong; nothing is left listening after one.
  static Result<std::unique_ptr<Server>> start(ServerConfig config);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// The URL of each listener, in the config's order ("http://127.0.0.1:8080", "unix:/path").
  [[nodiscard]] const std::vector<std::string>& urls() const;

  /// SIGHUP (docs/server.md "Reloading the config") reads the config file again and serves with it
  /// from the next request on, without closing a connection: tenants, keys, skill folders, data
  /// directories, ceilings, quotas, the metrics keys, the HTTP bounds and timeouts. A config that does
  /// not load is refused (each problem logged with its key) and the running one stays. Keys that are
  /// fixed at start (listen, isolation, run_threads, queue_limit) keep their values, and a change to
  /// them is logged as ignored.
  ///
  /// Serves on the calling thread until SIGINT or SIGTERM, then drains: no new connection, /readyz
  /// and every new API request answer 503, runs in progress get drain_timeout_ms to finish and are
  /// then cancelled (their responses still go out), and run() returns. A second signal cancels the
  /// runs at once.
  void run();

 private:
  Server();
  void begin_drain();
  void reload();
  void reopen_audit();
  void drain_watch();

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace skillbox::server
