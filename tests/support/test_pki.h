// tests/support/test_pki.h — certificates made at test time with the OpenSSL API.
//
// Nothing is checked in: every test process makes its own CA and server certificates (EC P-256,
// valid from an hour ago for a day), so no key material lives in the repository and nothing expires.
#pragma once

#include <string>
#include <vector>

namespace skillbox::testing {

/// A certificate and its private key, PEM-encoded.
struct PemPair {
  std::string cert_pem;
  std::string key_pem;
};

/// A test certificate authority that can issue server certificates.
class TestCa {
 public:
  /// Makes a new self-signed CA named `common_name`.
  explicit TestCa(const std::string& common_name);
  ~TestCa();
  TestCa(const TestCa&) = delete;
  TestCa& operator=(const TestCa&) = delete;

  /// The CA certificate (what a client must trust).
  [[nodiscard]] const std::string& cert_pem() const { return ca_.cert_pem; }

  /// Issues a server certificate for `subject_alt_names` in OpenSSL's syntax, e.g.
  /// {"IP:127.0.0.1", "DNS:localhost"}.
  [[nodiscard]] PemPair issue(const std::vector<std::string>& subject_alt_names) const;

 private:
  PemPair ca_;
  void* key_ = nullptr;   // EVP_PKEY*
  void* cert_ = nullptr;  // X509*
};

}  // namespace skillbox::testing
