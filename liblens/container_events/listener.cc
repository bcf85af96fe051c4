// The gRPC listener of a ContainerEventServer: its address, credentials and
// channel limits.
#include "container_events/listener.h"

#include <algorithm>
#include <climits>
#include <tuple>

#include "core/kernel_file.h"
#include "http/listen_address.h"

namespace lens::container_events {

// "host:port" as gRPC wants it, from the listen syntax every Lens daemon
// takes ("0.0.0.0:50051", ":50051", "[::]:50051").
StatusOr<std::string> GrpcAddress(std::string_view listen) {
  StatusOr<http::ListenAddress> a = http::ParseListenAddress(listen);
  if (!a.ok()) return a.status().WithContext("container event server listen");
  const std::string host =
      a->host.find(':') == std::string::npos ? a->host : "[" + a->host + "]";
  return host + ":" + std::to_string(a->port);
}

void SetServerOptions(const ContainerEventServerOptions& o,
                      grpc::ServerBuilder* b) {
  b->SetMaxReceiveMessageSize(
      static_cast<int>(std::min<size_t>(o.max_message_bytes, INT_MAX)));
  // A port in use must fail, not be shared with another process.
  b->AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // Find agents that vanished without closing (node lost), and let agents
  // keep their idle stream alive with pings every 10 s or more; a client
  // pinging faster is disconnected after two strikes.
  b->AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 60000);
  b->AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 20000);
  b->AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                        10000);
  b->AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 2);
  b->AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  // Idle streams carry no data for hours; keepalive pings must not stop.
  b->AddChannelArgument(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  // Bounds on what a client can hold without sending anything useful.
  b->AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, 4);
  b->AddChannelArgument(GRPC_ARG_MAX_METADATA_SIZE, 16 << 10);
  b->AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS, 5 * 60 * 1000);
  b->AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS,
                        static_cast<int>(std::min<int64_t>(
                            o.handshake_timeout.count(), INT_MAX)));
}

StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentials(
    const ContainerEventServerOptions& options) {
  const std::string& cert = options.tls_cert_file;
  const std::string& key = options.tls_key_file;
  if (cert.empty() && key.empty()) return grpc::InsecureServerCredentials();
  if (cert.empty() || key.empty()) {
    return InvalidArgumentError(
        "container event server: TLS needs both a certificate and a key file");
  }
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  for (const auto& [path, marker, out] :
       {std::tuple(&cert, "CERTIFICATE-----", &pair.cert_chain),
        std::tuple(&key, "PRIVATE KEY-----", &pair.private_key)}) {
    StatusOr<std::string> pem = ReadKernelFile(*path);
    if (!pem.ok() || pem->find(marker) == std::string::npos) {
      return InvalidArgumentError(
          "container event server: TLS file " + *path + " is not readable PEM" +
          (pem.ok() ? std::string() : ": " + pem.status().message()));
    }
    *out = std::move(*pem);
  }
  grpc::SslServerCredentialsOptions ssl;
  ssl.pem_key_cert_pairs.push_back(std::move(pair));
  return grpc::SslServerCredentials(ssl);
}

}  // namespace lens::container_events
