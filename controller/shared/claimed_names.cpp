#include "controller/shared/claimed_names.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <algorithm>

#include "common/net/host_name_table.h"

namespace scalws::controller {

using common::Result;

namespace {

// A certificate name as a claim: a DNS name, or "*." and one (RFC 6125 §6.4.3); anything
// else (an IP address in a CN, an odd wildcard) is not a name a client's SNI or Host can
// match here, and claims nothing.
bool claimable(const std::string& raw, std::string& out) {
  std::string_view name = raw;
  bool wildcard = name.size() > 2 && name.substr(0, 2) == "*.";
  if (wildcard) name.remove_prefix(2);
  std::string normalized;
  if (!common::net::normalizeHostName(name, normalized)) return false;
  out = wildcard ? "*." + normalized : normalized;
  return true;
}

}  // namespace

Result<std::vector<std::string>> certificateNames(const std::string& pem_path) {
  BIO* bio = BIO_new_file(pem_path.c_str(), "r");
  if (bio == nullptr) {
    ERR_clear_error();
    return common::errnoStatus(errno, "cannot read certificate " + pem_path);
  }
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (cert == nullptr) {
    ERR_clear_error();
    return common::invalidArgument("certificate " + pem_path + " holds no PEM certificate");
  }
  std::vector<std::string> names;
  std::string name;
  auto* sans =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (sans != nullptr) {
    for (int i = 0; i < sk_GENERAL_NAME_num(sans); ++i) {
      const GENERAL_NAME* san = sk_GENERAL_NAME_value(sans, i);
      if (san->type != GEN_DNS) continue;
      std::string dns(reinterpret_cast<const char*>(ASN1_STRING_get0_data(san->d.dNSName)),
                      static_cast<size_t>(ASN1_STRING_length(san->d.dNSName)));
      if (claimable(dns, name)) names.push_back(name);
    }
    GENERAL_NAMES_free(sans);
  }
  if (sans == nullptr) {
    char cn[256];
    int n = X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof(cn));
    if (n > 0 && claimable(std::string(cn, static_cast<size_t>(n)), name)) names.push_back(name);
  }
  X509_free(cert);
  ERR_clear_error();
  return names;
}

Result<std::vector<std::string>> claimedNames(const common::config::ListenConfig& listen) {
  std::vector<std::string> out = listen.names;
  if (out.empty() && listen.tls) {
    for (const common::config::TlsCertificateConfig& cert : listen.tls->allCertificates()) {
      if (!cert.names.empty()) {
        out.insert(out.end(), cert.names.begin(), cert.names.end());
        continue;
      }
      Result<std::vector<std::string>> names = certificateNames(cert.cert);
      if (!names.ok()) {
        return common::Status(names.status().code(),
                              cert.where.toString() + ": " + names.status().message() +
                                  " (to learn the names it claims; or give the listener `names`)");
      }
      out.insert(out.end(), names->begin(), names->end());
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace scalws::controller
