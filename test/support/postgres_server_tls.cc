// The TLS part of the test server's configuration (postgres_server.h).
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "postgres_server.h"

namespace lens::test {

namespace fs = std::filesystem;

Status PostgresServer::WriteTlsConfig(const Options& options) {
  if (options.ssl_cert_file.empty() && options.ssl_key_file.empty()) {
    return OkStatus();
  }
  if (options.ssl_cert_file.empty() || options.ssl_key_file.empty()) {
    return InvalidArgumentError(
        "TLS needs both ssl_cert_file and ssl_key_file");
  }
  // The server reads them as its own user and refuses a key that others can
  // read: copies it owns, mode 0600.
  const std::string data = dir_ + "/data";
  const std::pair<const std::string*, std::string> files[] = {
      {&options.ssl_cert_file, data + "/server.crt"},
      {&options.ssl_key_file, data + "/server.key"},
      {&options.ssl_ca_file, data + "/client_ca.crt"}};
  for (const auto& [from, to] : files) {
    if (from->empty()) continue;
    std::error_code ec;
    fs::copy_file(*from, to, fs::copy_options::overwrite_existing, ec);
    if (ec) return InternalError("copy " + *from + ": " + ec.message());
    if (::chmod(to.c_str(), 0600) != 0) return ErrnoError(errno, "chmod " + to);
    if (drop_privileges_ && ::chown(to.c_str(), uid_, gid_) != 0) {
      return ErrnoError(errno, "chown " + to);
    }
  }
  std::ofstream conf(data + "/postgresql.conf", std::ios::app);
  conf << "ssl = on\n"
       << "ssl_cert_file = '" << files[0].second << "'\n"
       << "ssl_key_file = '" << files[1].second << "'\n";
  if (!options.ssl_ca_file.empty()) {
    conf << "ssl_ca_file = '" << files[2].second << "'\n";
  }
  // Replaces initdb's file: no "host" line, so TCP without TLS is refused.
  std::ofstream hba(data + "/pg_hba.conf", std::ios::trunc);
  hba << "local all all scram-sha-256\n"
      << "hostssl all all 127.0.0.0/8 scram-sha-256\n"
      << "hostssl all all ::1/128 scram-sha-256\n";
  if (!conf || !hba) return InternalError("write the TLS configuration");
  tls_ = true;
  return OkStatus();
}

}  // namespace lens::test
