// gRPC status -> lens::Status, for every adapter that talks gRPC (containerd,
// kubelet pod-resources, the node event stream). Header-only: the adapters
// already link gRPC.
#ifndef LENS_PROTO_GRPC_STATUS_H_
#define LENS_PROTO_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include <string>
#include <string_view>

#include "lens/status.h"

namespace lens {

// The canonical codes are the same set, so the code carries over; the message
// becomes "<what>: <gRPC message>".
inline Status FromGrpcStatus(const grpc::Status& status,
                             std::string_view what) {
  if (status.ok()) return OkStatus();
  std::string message(what);
  message += ": ";
  message +=
      status.error_message().empty() ? "gRPC error" : status.error_message();
  return Status(static_cast<StatusCode>(status.error_code()),
                std::move(message));
}

}  // namespace lens

#endif  // LENS_PROTO_GRPC_STATUS_H_
