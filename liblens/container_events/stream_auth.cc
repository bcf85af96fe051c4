#include "container_events/stream_auth.h"

#include <string_view>
#include <utility>

#include "http/wire.h"

namespace lens::container_events {

StreamAuth::StreamAuth(std::string shared_token,
                       std::map<std::string, std::string> node_tokens,
                       bool accept_shared_token)
    : shared_token_(std::move(shared_token)),
      node_tokens_(std::move(node_tokens)),
      accept_shared_token_(accept_shared_token) {}

StreamIdentity StreamAuth::Authenticate(const grpc::ServerContext& ctx) const {
  const bool per_node = !node_tokens_.empty();
  const bool shared =
      !shared_token_.empty() && (!per_node || accept_shared_token_);
  if (!per_node && shared_token_.empty()) return {true, std::nullopt};
  const auto& md = ctx.client_metadata();
  const auto it = md.find("authorization");
  if (it == md.end()) return {};
  const std::string_view header(it->second.data(), it->second.size());
  // Every token is compared, so the time taken does not tell which matched.
  std::optional<std::string> node;
  for (const auto& [name, token] : node_tokens_) {
    if (http::Authorized(header, token)) node = name;
  }
  if (node) return {true, std::move(node)};
  if (shared && http::Authorized(header, shared_token_)) {
    return {true, std::nullopt};
  }
  return {};
}

std::string StreamAuth::UnauthenticatedMessage() const {
  return node_tokens_.empty() ? "missing or wrong bearer token"
                              : "missing or wrong bearer token: each node "
                                "agent needs its node's own token";
}

grpc::Status PermissionDenied(const std::string& identity,
                              const std::string& node) {
  constexpr size_t kMaxShown = 253;
  const std::string shown =
      node.size() <= kMaxShown ? node : node.substr(0, kMaxShown) + "...";
  return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                      "the token of node '" + identity +
                          "' cannot speak for node '" + shown + "'");
}

}  // namespace lens::container_events
