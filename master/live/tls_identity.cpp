#include "master/live/tls_identity.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <arpa/inet.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <memory>

#include "common/base/error.h"
#include "common/base/file_io.h"
#include "master/live/lan_addresses.h"

namespace tessera::master::live {
namespace {

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using Bio = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using Key = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using Cert = std::unique_ptr<X509, Deleter<X509, X509_free>>;

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  return std::string(data, size_t(size));
}

Cert parse_certificate(const std::string& pem, const std::string& where) {
  Bio bio(BIO_new_mem_buf(pem.data(), int(pem.size())));
  Cert cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) throw Error(where + ": not a PEM certificate");
  return cert;
}

void check_private_key(const std::string& pem, const std::string& where) {
  Bio bio(BIO_new_mem_buf(pem.data(), int(pem.size())));
  Key key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key) throw Error(where + ": not a PEM private key (without passphrase)");
}

std::string host_name() {
  char host[256] = "localhost";
  ::gethostname(host, sizeof host - 1);
  return host;
}

// IP addresses in one spelling (inet_ntop's), so "::1" and "0:0::1" compare equal.
std::string canonical_ip(const std::string& text) {
  unsigned char raw[16];
  char back[INET6_ADDRSTRLEN] = "";
  if (::inet_pton(AF_INET, text.c_str(), raw) == 1) return ::inet_ntop(AF_INET, raw, back, sizeof back);
  if (::inet_pton(AF_INET6, text.c_str(), raw) == 1) return ::inet_ntop(AF_INET6, raw, back, sizeof back);
  return text;
}

// The names a self-signed certificate gets: the fixed ones, then the served hosts not among them.
std::vector<CertificateName> self_signed_names(const std::vector<std::string>& served_hosts) {
  std::vector<CertificateName> names{{"localhost", false}, {"127.0.0.1", true}, {host_name(), false}};
  for (const auto& host : served_hosts) {
    CertificateName name = certificate_name(host);
    if (name.ip) name.value = canonical_ip(name.value);
    if (std::none_of(names.begin(), names.end(), [&](const CertificateName& n) { return n.value == name.value; })) names.push_back(name);
  }
  return names;
}

// The subject alternative names of a certificate (IP addresses canonical, DNS names as written).
std::vector<CertificateName> subject_alternative_names(const X509* cert) {
  std::vector<CertificateName> names;
  auto* general = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (!general) return names;
  for (int i = 0; i < sk_GENERAL_NAME_num(general); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(general, i);
    if (name->type == GEN_DNS) {
      const ASN1_STRING* dns = name->d.dNSName;
      names.push_back({std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(dns)), size_t(ASN1_STRING_length(dns))), false});
    } else if (name->type == GEN_IPADD) {
      const ASN1_OCTET_STRING* ip = name->d.iPAddress;
      char text[INET6_ADDRSTRLEN] = "";
      const int length = ASN1_STRING_length(ip);
      if ((length == 4 || length == 16) && ::inet_ntop(length == 4 ? AF_INET : AF_INET6, ASN1_STRING_get0_data(ip), text, sizeof text))
        names.push_back({text, true});
    }
  }
  GENERAL_NAMES_free(general);
  return names;
}

// The served hosts `cert` does not name (DNS names compared without case; wildcards not expanded).
std::vector<std::string> unnamed_hosts(const X509* cert, const std::vector<std::string>& served_hosts) {
  const auto names = subject_alternative_names(cert);
  const auto lower = [](std::string text) {
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return text;
  };
  std::vector<std::string> missing;
  for (const auto& host : served_hosts) {
    const CertificateName wanted = certificate_name(host);
    const bool named = std::any_of(names.begin(), names.end(), [&](const CertificateName& n) {
      return n.ip == wanted.ip && (n.ip ? n.value == canonical_ip(wanted.value) : lower(n.value) == lower(wanted.value));
    });
    if (!named) missing.push_back(wanted.value);
  }
  return missing;
}

// Self-signed, valid for ten years, for `names`.
std::pair<std::string, std::string> make_self_signed(const std::vector<CertificateName>& names) {
  Key key(EVP_EC_gen("P-256"));
  if (!key) throw Error("cannot generate a TLS key");
  Cert cert(X509_new());
  X509_set_version(cert.get(), 2);
  std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>> bn(BN_new());
  BN_rand(bn.get(), 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY);
  BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert.get()));
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 3650L * 24 * 3600);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  const std::string common_name = "Tessera live session on " + host_name();
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert.get(), cert.get(), nullptr, nullptr, 0);
  std::string alternative_names;
  for (const auto& n : names) alternative_names += (alternative_names.empty() ? "" : ",") + std::string(n.ip ? "IP:" : "DNS:") + n.value;
  for (const auto& [nid, value] : {std::pair{NID_subject_alt_name, alternative_names}, std::pair{NID_basic_constraints, std::string("critical,CA:FALSE")}}) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
    if (!ext) throw Error("cannot make the certificate's extensions (" + value + ")");
    X509_add_ext(cert.get(), ext, -1);
    X509_EXTENSION_free(ext);
  }
  if (!X509_sign(cert.get(), key.get(), EVP_sha256())) throw Error("cannot sign the TLS certificate");
  Bio cert_bio(BIO_new(BIO_s_mem())), key_bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(cert_bio.get(), cert.get());
  PEM_write_bio_PrivateKey(key_bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  return {bio_text(cert_bio.get()), bio_text(key_bio.get())};
}

}  // namespace

std::filesystem::path config_folder() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) return std::filesystem::path(xdg) / "tessera";
  const char* home = std::getenv("HOME");
  if (!home || !*home) throw Error("neither XDG_CONFIG_HOME nor HOME is set: pass --tls-cert and --tls-key");
  return std::filesystem::path(home) / ".config" / "tessera";
}

std::string certificate_fingerprint(const std::string& certificate_pem) {
  const Cert cert = parse_certificate(certificate_pem, "certificate");
  return certificate_fingerprint(cert.get());
}

std::string certificate_fingerprint(const x509_st* certificate) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  X509_digest(certificate, EVP_sha256(), digest, &length);
  static const char* hex = "0123456789ABCDEF";
  std::string text;
  for (unsigned i = 0; i < length; ++i) {
    if (i) text += ':';
    text += hex[digest[i] >> 4];
    text += hex[digest[i] & 15];
  }
  return text;
}

TlsIdentity load_tls_identity(const std::optional<std::filesystem::path>& cert, const std::optional<std::filesystem::path>& key,
                              const std::vector<std::string>& served_hosts) {
  TlsIdentity id;
  if (cert.has_value() != key.has_value()) throw Error("--tls-cert and --tls-key go together");
  if (cert) {
    id.certificate_pem = read_file_text(*cert);
    id.private_key_pem = read_file_text(*key);
    id.unnamed = unnamed_hosts(parse_certificate(id.certificate_pem, cert->string()).get(), served_hosts);
    check_private_key(id.private_key_pem, key->string());
    id.certificate_path = *cert;
  } else {
    const auto folder = config_folder();
    const auto cert_path = folder / "live-cert.pem", key_path = folder / "live-key.pem";
    std::error_code ec;
    const bool kept = std::filesystem::exists(cert_path, ec) && std::filesystem::exists(key_path, ec);
    if (kept) {
      id.certificate_pem = read_file_text(cert_path);
      id.private_key_pem = read_file_text(key_path);
      id.replaced = !unnamed_hosts(parse_certificate(id.certificate_pem, cert_path.string()).get(), served_hosts).empty();
      check_private_key(id.private_key_pem, key_path.string());
    }
    if (!kept || id.replaced) {
      std::filesystem::create_directories(folder, ec);
      if (ec) throw Error("cannot create " + folder.string() + ": " + ec.message());
      std::tie(id.certificate_pem, id.private_key_pem) = make_self_signed(self_signed_names(served_hosts));
      const mode_t old_mask = ::umask(077);  // the key is readable by its owner only
      try {
        write_file_atomically(key_path, id.private_key_pem.data(), id.private_key_pem.size());
        write_file_atomically(cert_path, id.certificate_pem.data(), id.certificate_pem.size());
      } catch (...) {
        ::umask(old_mask);
        throw;
      }
      ::umask(old_mask);
      id.created = true;
    }
    id.certificate_path = cert_path;
  }
  id.fingerprint = certificate_fingerprint(id.certificate_pem);
  return id;
}

}  // namespace tessera::master::live
