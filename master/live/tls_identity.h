#pragma once
// The certificate and key the live session serves HTTPS/WSS with: the user's own (--tls-cert,
// --tls-key), or a self-signed one made with OpenSSL (EC P-256, naming localhost, 127.0.0.1, this
// host's name and the addresses served) and kept in the user's config folder so browsers that
// accepted it once keep accepting it; made anew when it does not name an address now served (the
// machine joined another network). Its SHA-256 fingerprint is what a person compares before accepting.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

struct x509_st;  // OpenSSL's X509

namespace tessera::master::live {

struct TlsIdentity {
  std::string certificate_pem, private_key_pem;
  std::string fingerprint;             // SHA-256 of the DER certificate, "AB:CD:..."
  std::filesystem::path certificate_path;
  bool created = false;                // made just now
  bool replaced = false;               // made just now instead of a kept one that did not name every served host
  std::vector<std::string> unnamed;    // served hosts the user's own certificate does not name (browsers will warn)
};

// $XDG_CONFIG_HOME/tessera, else ~/.config/tessera.
std::filesystem::path config_folder();

// Loads cert and key when given (both or neither); else loads the self-signed pair in
// config_folder(), or creates it there when missing or when it does not name every one of
// `served_hosts` (addresses or names, as served_hosts() gives them). Throws Error naming the file
// and the problem.
TlsIdentity load_tls_identity(const std::optional<std::filesystem::path>& cert, const std::optional<std::filesystem::path>& key,
                              const std::vector<std::string>& served_hosts = {});

std::string certificate_fingerprint(const std::string& certificate_pem);
// The same fingerprint of a certificate already parsed (a peer's, during a TLS handshake).
std::string certificate_fingerprint(const x509_st* certificate);

}  // namespace tessera::master::live
