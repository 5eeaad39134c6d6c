// cli/fixture_server.cpp — see fixture_server.h.
#include "cli/fixture_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string_view>

namespace skillbox::cli {
namespace {

/// Requests bigger than this (head and body) are answered 413 and not read further.
constexpr size_t kMaxRequestBytes = 64u << 20;
/// How long one connection may take to send its request.
constexpr auto kRequestTimeout = std::chrono::seconds(10);

std::string_view reason_phrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 304:
      return "Not Modified";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 409:
      return "Conflict";
    case 413:
      return "Content Too Large";
    case 422:
      return "Unprocessable Content";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    default:
      return "";
  }
}

void write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the client went away: nothing to tell it
    done += static_cast<size_t>(n);
  }
}

std::string respond(const FixtureResponse& r, bool head) {
  std::string out =
      "HTTP/1.1 " + std::to_string(r.status) + " " + std::string(reason_phrase(r.status)) + "\r\n";
  for (const auto& [name, value] : r.headers) out += name + ": " + value + "\r\n";
  // 204 and 304 have no body (RFC 9110 15.3.5, 15.4.5): sending one would leave bytes a client may
  // read as another response.
  const bool bodiless = head || r.status == 204 || r.status == 304;
  out += "Content-Length: " + std::to_string(bodiless ? 0 : r.body.size()) + "\r\nConnection: close\r\n\r\n";
  if (!bodiless) out += r.body;
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

}  // namespace

Result<std::unique_ptr<FixtureServer>> FixtureServer::start(std::string origin,
                                                            std::vector<FixtureRoute> routes) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return Error{std::string("cannot open a socket for the HTTP fixtures: ") + std::strerror(errno)};
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 64) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    return Error{"cannot listen on 127.0.0.1 for the HTTP fixtures: " + why};
  }
  int wake[2];
  if (::pipe2(wake, O_CLOEXEC) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    return Error{"cannot start the HTTP fixture server: " + why};
  }
  std::unique_ptr<FixtureServer> server(
      new FixtureServer(std::move(origin), std::move(routes), fd, wake[0], wake[1], ntohs(addr.sin_port)));
  server->thread_ = std::thread([s = server.get()] { s->serve(); });
  return server;
}

FixtureServer::FixtureServer(std::string origin, std::vector<FixtureRoute> routes, int listen_fd,
                             int wake_read, int wake_write, int port)
    : origin_(std::move(origin)),
      listen_fd_(listen_fd),
      wake_read_(wake_read),
      wake_write_(wake_write),
      port_(port) {
  for (FixtureRoute& r : routes) {
    fixtures_.push_back(std::move(r.request));
    answers_.push_back(std::move(r.response));
  }
}

FixtureServer::~FixtureServer() {
  const char byte = 0;
  while (::write(wake_write_, &byte, 1) < 0 && errno == EINTR) {
  }
  if (thread_.joinable()) thread_.join();
  ::close(listen_fd_);
  ::close(wake_read_);
  ::close(wake_write_);
}

std::string FixtureServer::address() const {
  return "http://127.0.0.1:" + std::to_string(port_);
}

std::vector<FixtureMiss> FixtureServer::misses() const {
  const std::lock_guard lock(mutex_);
  return misses_;
}

size_t FixtureServer::requests() const {
  const std::lock_guard lock(mutex_);
  return requests_;
}

void FixtureServer::serve() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_read_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    handle(fd);
    ::close(fd);
  }
}

void FixtureServer::handle(int fd) {
  // Read until the head is complete, then the body its Content-Length declares.
  const auto deadline = std::chrono::steady_clock::now() + kRequestTimeout;
  std::string data;
  size_t head_end = std::string::npos;
  size_t need = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // lower-case names
  char buffer[16384];
  for (;;) {
    if (head_end != std::string::npos && data.size() >= need) break;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return;
    pollfd pfd{fd, POLLIN, 0};
    pollfd wake{wake_read_, POLLIN, 0};
    pollfd fds[2] = {pfd, wake};
    if (::poll(fds, 2, static_cast<int>(left.count())) <= 0 || fds[1].revents != 0) return;
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data.append(buffer, static_cast<size_t>(n));
    if (data.size() > kMaxRequestBytes) {
      write_all(fd, respond(FixtureResponse{413, {}, "skillbox test: request too large\n"}, false));
      return;
    }
    if (head_end == std::string::npos) {
      head_end = data.find("\r\n\r\n");
      if (head_end == std::string::npos) continue;
      need = head_end + 4;
      size_t at = data.find("\r\n") + 2;
      while (at < head_end) {
        const size_t eol = data.find("\r\n", at);
        const std::string_view line(data.data() + at, eol - at);
        const size_t colon = line.find(':');
        if (colon != std::string_view::npos) {
          const std::string name = lower(line.substr(0, colon));
          std::string_view value = line.substr(colon + 1);
          while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
          while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
          headers.emplace_back(name, std::string(value));
          if (name == "content-length") {
            need += std::strtoull(std::string(value).c_str(), nullptr, 10);
          } else if (name == "transfer-encoding") {
            write_all(
                fd,
                respond(FixtureResponse{501, {}, "skillbox test: chunked request bodies are not supported\n"},
                        false));
            return;
          }
        }
        at = eol + 2;
      }
    }
  }
  const std::string_view request_line(data.data(), data.find("\r\n"));
  const size_t sp1 = request_line.find(' ');
  const size_t sp2 = request_line.find(' ', sp1 == std::string_view::npos ? 0 : sp1 + 1);
  if (sp1 == std::string_view::npos || sp2 == std::string_view::npos) {
    write_all(fd, respond(FixtureResponse{400, {}, "skillbox test: malformed request line\n"}, false));
    return;
  }
  ReceivedRequest got;
  got.method = std::string(request_line.substr(0, sp1));
  got.target = std::string(request_line.substr(sp1 + 1, sp2 - sp1 - 1));
  got.headers = std::move(headers);
  got.body = data.substr(head_end + 4, need - head_end - 4);
  const std::optional<size_t> match = matching_fixture(fixtures_, got);
  const std::string shown = got.method + " " + origin_ + got.target;
  {
    const std::lock_guard lock(mutex_);
    ++requests_;
    if (!match) {
      FixtureMiss miss{shown, {}, {}};
      if (const std::optional<size_t> closest = closest_fixture(fixtures_, got)) {
        const FixtureRequest& c = fixtures_[*closest];
        miss.closest = c.label + " " + c.method + " " + origin_ + c.target;
        miss.differences = fixture_differences(c, got);
      }
      misses_.push_back(std::move(miss));
    }
  }
  if (!match) {
    write_all(fd, respond(FixtureResponse{404,
                                          {{"Content-Type", "text/plain"}},
                                          "skillbox test: no fixture for " + shown + "\n"},
                          got.method == "HEAD"));
    return;
  }
  write_all(fd, respond(answers_[*match], got.method == "HEAD"));
}

}  // namespace skillbox::cli
