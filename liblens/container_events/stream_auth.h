// Who is on the other end of an agent stream: the shared bearer token (any
// node) or a node's own token (that node only). gRPC types stay inside
// liblens/container_events.
#ifndef LENS_CONTAINER_EVENTS_STREAM_AUTH_H_
#define LENS_CONTAINER_EVENTS_STREAM_AUTH_H_

#include <grpcpp/grpcpp.h>

#include <map>
#include <optional>
#include <string>

namespace lens::container_events {

// The outcome of authenticating one stream.
struct StreamIdentity {
  bool authenticated = false;
  // The node the stream may speak for; none: any node (no auth configured,
  // or the shared token).
  std::optional<std::string> node;
};

// Immutable after construction; thread-safe.
class StreamAuth {
 public:
  StreamAuth(std::string shared_token,
             std::map<std::string, std::string> node_tokens,
             bool accept_shared_token);

  // From the stream's "authorization: Bearer <token>" metadata; tokens are
  // compared in constant time.
  StreamIdentity Authenticate(const grpc::ServerContext& ctx) const;
  // What an unauthenticated stream is told.
  std::string UnauthenticatedMessage() const;

 private:
  const std::string shared_token_;
  const std::map<std::string, std::string> node_tokens_;
  const bool accept_shared_token_;
};

// The status of a stream whose `identity` is not `node`.
grpc::Status PermissionDenied(const std::string& identity,
                              const std::string& node);

}  // namespace lens::container_events

#endif  // LENS_CONTAINER_EVENTS_STREAM_AUTH_H_
