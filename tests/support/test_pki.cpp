// tests/support/test_pki.cpp — OpenSSL 3 certificate generation for the loopback HTTPS servers.
#include "support/test_pki.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <atomic>
#include <stdexcept>

namespace skillbox::testing {
namespace {

void require(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("test PKI: ") + what + " failed");
}

std::string to_pem(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  require(bio != nullptr && PEM_write_bio_X509(bio, cert) == 1, "PEM_write_bio_X509");
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(bio);
  return out;
}

std::string to_pem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  require(bio != nullptr && PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr) == 1,
          "PEM_write_bio_PrivateKey");
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(bio);
  return out;
}

void add_ext(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  require(ext != nullptr, "X509V3_EXT_conf_nid");
  require(X509_add_ext(cert, ext, -1) == 1, "X509_add_ext");
  X509_EXTENSION_free(ext);
}

long next_serial() {
  static std::atomic<long> serial{1000};
  return serial.fetch_add(1);
}

X509* new_cert(EVP_PKEY* key, const std::string& cn) {
  X509* cert = X509_new();
  require(cert != nullptr, "X509_new");
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), next_serial());
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), long{24} * 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn.c_str()), -1,
                             -1, 0);
  return cert;
}

}  // namespace

TestCa::TestCa(const std::string& common_name) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  require(key != nullptr, "EVP_EC_gen");
  X509* cert = new_cert(key, common_name);
  X509_set_issuer_name(cert, X509_get_subject_name(cert));
  add_ext(cert, cert, NID_basic_constraints, "critical,CA:TRUE");
  add_ext(cert, cert, NID_key_usage, "critical,keyCertSign,cRLSign");
  add_ext(cert, cert, NID_subject_key_identifier, "hash");
  require(X509_sign(cert, key, EVP_sha256()) > 0, "X509_sign");
  ca_ = {to_pem(cert), to_pem(key)};
  key_ = key;
  cert_ = cert;
}

TestCa::~TestCa() {
  X509_free(static_cast<X509*>(cert_));
  EVP_PKEY_free(static_cast<EVP_PKEY*>(key_));
}

PemPair TestCa::issue(const std::vector<std::string>& subject_alt_names) const {
  auto* ca_cert = static_cast<X509*>(cert_);
  auto* ca_key = static_cast<EVP_PKEY*>(key_);
  EVP_PKEY* key = EVP_EC_gen("P-256");
  require(key != nullptr, "EVP_EC_gen");
  X509* cert = new_cert(key, "skillbox test server");
  X509_set_issuer_name(cert, X509_get_subject_name(ca_cert));
  std::string san;
  for (const std::string& n : subject_alt_names) san += (san.empty() ? "" : ",") + n;
  add_ext(cert, ca_cert, NID_basic_constraints, "critical,CA:FALSE");
  add_ext(cert, ca_cert, NID_key_usage, "critical,digitalSignature");
  add_ext(cert, ca_cert, NID_ext_key_usage, "serverAuth");
  add_ext(cert, ca_cert, NID_subject_alt_name, san);
  add_ext(cert, ca_cert, NID_authority_key_identifier, "keyid:always");
  require(X509_sign(cert, ca_key, EVP_sha256()) > 0, "X509_sign");
  PemPair out{to_pem(cert), to_pem(key)};
  X509_free(cert);
  EVP_PKEY_free(key);
  return out;
}

}  // namespace skillbox::testing
