#include <arpa/inet.h>

#include <cstring>
#include <string>

#include "lens/flow_policy.h"

namespace lens {
namespace {
constexpr uint8_t kV4MappedPrefix[12] = {0, 0, 0, 0, 0,    0,
                                         0, 0, 0, 0, 0xff, 0xff};
}  // namespace

StatusOr<IpAddress> IpAddress::Parse(std::string_view text) {
  std::string s(text);
  IpAddress a;
  if (inet_pton(AF_INET, s.c_str(), a.bytes.data()) == 1) {
    a.family = 4;
    return a;
  }
  if (inet_pton(AF_INET6, s.c_str(), a.bytes.data()) == 1) {
    a.family = 6;
    return a;
  }
  return InvalidArgumentError("\"" + s + "\" is not an IPv4 or IPv6 address");
}

IpAddress IpAddress::V4(const uint8_t bytes[4]) {
  IpAddress a;
  a.family = 4;
  std::memcpy(a.bytes.data(), bytes, 4);
  return a;
}

IpAddress IpAddress::V6(const uint8_t bytes[16]) {
  IpAddress a;
  a.family = 6;
  std::memcpy(a.bytes.data(), bytes, 16);
  return a;
}

IpAddress IpAddress::Unmapped() const {
  if (family != 6 ||
      std::memcmp(bytes.data(), kV4MappedPrefix, sizeof kV4MappedPrefix) != 0) {
    return *this;
  }
  return V4(bytes.data() + 12);
}

std::string IpAddress::ToString() const {
  char buf[INET6_ADDRSTRLEN];
  if (!inet_ntop(family == 4 ? AF_INET : AF_INET6, bytes.data(), buf,
                 sizeof buf)) {
    return "?";
  }
  return buf;
}

bool IpAddress::IsUnspecified() const {
  const size_t n = family == 4 ? 4 : 16;
  for (size_t i = 0; i < n; ++i) {
    if (bytes[i]) return false;
  }
  return true;
}

std::string_view FlowClassName(FlowClass cls) {
  switch (cls) {
    case FlowClass::kLocalhost:
      return "localhost";
    case FlowClass::kDns:
      return "dns";
    case FlowClass::kK8sSvc:
      return "k8s_svc";
    case FlowClass::kK8sPod:
      return "k8s_pod";
    case FlowClass::kDocker:
      return "docker";
    case FlowClass::kInternal:
      return "internal";
    case FlowClass::kExternal:
      return "external";
  }
  return "external";
}

std::string_view FlowDirectionName(FlowDirection direction) {
  switch (direction) {
    case FlowDirection::kIngress:
      return "ingress";
    case FlowDirection::kEgress:
      return "egress";
    case FlowDirection::kUnknown:
      return "unknown";
  }
  return "unknown";
}

}  // namespace lens
