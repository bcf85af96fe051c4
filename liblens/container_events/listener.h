// The gRPC listener of a ContainerEventServer: address syntax, TLS
// credentials and the channel limits of docs/containers.md.
#ifndef LENS_CONTAINER_EVENTS_LISTENER_H_
#define LENS_CONTAINER_EVENTS_LISTENER_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <string_view>

#include "container_events/container_events.h"
#include "lens/status.h"

namespace lens::container_events {

// "host:port" as gRPC wants it, from the listen syntax every Lens daemon
// takes ("0.0.0.0:50051", ":50051", "[::]:50051").
StatusOr<std::string> GrpcAddress(std::string_view listen);
// The message size limit, keepalive rules and connection limits.
void SetServerOptions(const ContainerEventServerOptions& o,
                      grpc::ServerBuilder* b);
// Insecure without TLS files; TLS with both (InvalidArgument naming an
// unreadable or non-PEM file, or only one of the two set).
StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentials(
    const ContainerEventServerOptions& options);

}  // namespace lens::container_events

#endif  // LENS_CONTAINER_EVENTS_LISTENER_H_
