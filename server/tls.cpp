// server/tls.cpp — see tls.h.
#include "server/tls.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/ssl/context.hpp>
#include <cerrno>
#include <cstdio>
#include <string>

#include "base/errno_text.h"
#include "base/unique_fd.h"

namespace skillbox::server {
namespace {

namespace ssl = boost::asio::ssl;

/// The contents of `path`; for a key (`is_key`), refused when others may read or write it. The mode is
/// that of the file opened, after symlinks (a key under /etc/letsencrypt/live is a symlink).
Result<std::string> read_pem(const std::filesystem::path& path, const char* what, bool is_key) {
  const std::string name = std::string(what) + " " + path.string();
  const base::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (!fd) return Error{name + ": cannot open: " + base::errno_text(errno)};
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return Error{name + ": not a regular file"};
  if (is_key && (st.st_mode & 0007) != 0) {
    char mode[8];
    (void)std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return Error{name + ": every user of this machine may read or write the private key (mode " + mode +
                 "); make it the server's own: chmod 600 " + path.string() + " (or 640 with a group)"};
  }
  if (static_cast<size_t>(st.st_size) > kMaxTlsFileBytes)
    return Error{name + ": larger than 1 MiB; is it a PEM file?"};
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error{name + ": cannot read: " + base::errno_text(n < 0 ? errno : EIO)};
    got += static_cast<size_t>(n);
  }
  return text;
}

/// OpenSSL's reason for the last failure, emptied from its error queue.
std::string openssl_reason(const boost::system::error_code& ec) {
  ERR_clear_error();
  return ec.message();
}

}  // namespace

Result<std::shared_ptr<ssl::context>> make_tls_context(const std::filesystem::path& cert,
                                                       const std::filesystem::path& key) {
  Result<std::string> chain = read_pem(cert, "tls_cert", false);
  if (!chain) return chain.error();
  Result<std::string> secret = read_pem(key, "tls_key", true);
  if (!secret) return secret.error();
  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  SSL_CTX* native = context->native_handle();
  // TLS 1.3 only (tls.h says why); no compression (CRIME), no renegotiation.
  SSL_CTX_set_min_proto_version(native, TLS1_3_VERSION);
  SSL_CTX_set_options(native, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  boost::system::error_code ec;
  context->use_certificate_chain(boost::asio::buffer(*chain), ec);
  if (ec) {
    return Error{"tls_cert " + cert.string() + ": not a PEM certificate chain (" + openssl_reason(ec) + ")"};
  }
  context->use_private_key(boost::asio::buffer(*secret), ssl::context::pem, ec);
  OPENSSL_cleanse(secret->data(), secret->size());
  if (ec) {
    return Error{"tls_key " + key.string() + ": not a PEM private key of tls_cert's certificate (" +
                 openssl_reason(ec) + ")"};
  }
  if (SSL_CTX_check_private_key(native) != 1) {
    ERR_clear_error();
    return Error{"tls_key " + key.string() + ": not the private key of the certificate in " + cert.string()};
  }
  return context;
}

}  // namespace skillbox::server
