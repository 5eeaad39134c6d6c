// server/tls.h — TLS for the listeners of `skillbox serve` (docs/server.md "TLS"): a server context made
// from a certificate chain and its private key, PEM files named by a listener of the config.
//
// TLS 1.3 only (RFC 8446): the issue asks for it, and every maintained HTTP client speaks it (OpenSSL
// 1.1.1 and later, so curl, Python, Node, Go and Java of the last five years). Leaving 1.2 out leaves out
// its legacy cipher suites, renegotiation and RSA key exchange; a client that offers only 1.2 or older is
// refused during the handshake (a protocol_version alert) and never reaches the HTTP layer.
#pragma once

#include <filesystem>
#include <memory>

#include "skillbox/result.h"

namespace boost::asio::ssl {
class context;
}  // namespace boost::asio::ssl

namespace skillbox::server {

/// Largest certificate or key file read: a long chain of RSA certificates is a few tens of KiB.
inline constexpr size_t kMaxTlsFileBytes = size_t{1024} * 1024;

/// A TLS 1.3-only server context with the chain of `cert` (PEM: the server's certificate first, then any
/// intermediates) and the private key of `key` (PEM). Each file is opened once and checked on what was
/// opened (no check-then-open race). Refused, with an error naming the file and what to do: a file that
/// cannot be read or is larger than kMaxTlsFileBytes; a key file that every user may read or write (mode
/// bits for "others"; group access is allowed, as Debian's ssl-cert group uses it); a file that holds
/// no PEM certificate or key; a key that does not match the certificate. The key's bytes are wiped
/// from memory once loaded.
[[nodiscard]] Result<std::shared_ptr<boost::asio::ssl::context>> make_tls_context(
    const std::filesystem::path& cert, const std::filesystem::path& key);

}  // namespace skillbox::server
