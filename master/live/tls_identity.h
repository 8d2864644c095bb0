#pragma once
// The certificate and key the live session serves HTTPS/WSS with: the user's own (--tls-cert,
// --tls-key), or a self-signed one made on first start with OpenSSL (EC P-256, names localhost,
// this host and its addresses) and kept in the user's config folder so browsers that accepted it
// once keep accepting it. Its SHA-256 fingerprint is what a person compares before accepting.
#include <filesystem>
#include <optional>
#include <string>

namespace tessera::master::live {

struct TlsIdentity {
  std::string certificate_pem, private_key_pem;
  std::string fingerprint;             // SHA-256 of the DER certificate, "AB:CD:..."
  std::filesystem::path certificate_path;
  bool created = false;                // made just now
};

// $XDG_CONFIG_HOME/tessera, else ~/.config/tessera.
std::filesystem::path config_folder();

// Loads cert and key when given (both or neither); else loads or creates the self-signed pair in
// config_folder(). Throws Error naming the file and the problem.
TlsIdentity load_tls_identity(const std::optional<std::filesystem::path>& cert, const std::optional<std::filesystem::path>& key);

std::string certificate_fingerprint(const std::string& certificate_pem);

}  // namespace tessera::master::live
