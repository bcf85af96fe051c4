// Classifying TCP endpoints: which class of peer an address is (localhost,
// DNS server, Kubernetes service or pod, docker bridge, internal host, or the
// internet) and in which direction a connection runs (ingress: the local end
// is a listening port of this host; egress: anything else).
//
//   auto policy = lens::LoadFlowPolicy("/etc/lens/netflow-policy.yaml");
//   if (!policy.ok()) return policy.status();
//   auto classifier = lens::FlowClassifier::Create(*policy);
//   lens::IpAddress peer = *lens::IpAddress::Parse("10.96.0.10");
//   lens::FlowClass cls = (*classifier)->Classify(peer);   // kK8sSvc
//
// The policy file (YAML; every key optional, each a list of CIDRs, IPv4 or
// IPv6, a bare address meaning /32 or /128):
//
//   internalHosts: [10.0.0.0/8, "fd00::/8"]
//   k8sPod:        [10.244.0.0/16]
//   k8sSvc:        [10.96.0.0/12]
//   dns:           [10.96.0.10]
//   docker:        [172.17.0.0/16]
//   localhost:     [127.0.0.0/8, "::1"]
//   resolvConf:    /etc/resolv.conf   # nameservers added to `dns`; "" = off
//
// Matching is longest-prefix across all classes; on equal prefixes the class
// listed first in FlowClass wins. Unmatched addresses are kExternal.
// IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) match as their IPv4 address.
#ifndef LENS_FLOW_POLICY_H_
#define LENS_FLOW_POLICY_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lens/export.h"
#include "lens/status.h"

namespace lens {

// An IPv4 or IPv6 address. IPv4 is stored in the first 4 bytes.
struct LENS_EXPORT IpAddress {
  int family = 4;  // 4 or 6
  std::array<uint8_t, 16> bytes{};

  // "10.0.0.1", "fe80::1", "::ffff:10.0.0.1" (kept as IPv6; see Unmapped).
  // InvalidArgument naming the text otherwise.
  static StatusOr<IpAddress> Parse(std::string_view text);
  static IpAddress V4(const uint8_t bytes[4]);
  static IpAddress V6(const uint8_t bytes[16]);
  // An IPv4-mapped IPv6 address as IPv4; anything else unchanged.
  IpAddress Unmapped() const;
  // Canonical text (inet_ntop).
  std::string ToString() const;
  bool IsUnspecified() const;  // 0.0.0.0 or ::
  friend bool operator==(const IpAddress&, const IpAddress&) = default;
};

// Endpoint classes, in tie-break order.
enum class FlowClass {
  kLocalhost,
  kDns,
  kK8sSvc,
  kK8sPod,
  kDocker,
  kInternal,
  kExternal,
};
// "localhost", "dns", "k8s_svc", "k8s_pod", "docker", "internal", "external".
LENS_EXPORT std::string_view FlowClassName(FlowClass cls);

enum class FlowDirection { kUnknown, kIngress, kEgress };
// "unknown", "ingress", "egress".
LENS_EXPORT std::string_view FlowDirectionName(FlowDirection direction);

// The policy file's content: CIDRs as written (validated by ParseFlowPolicy).
struct LENS_EXPORT FlowPolicy {
  std::vector<std::string> internal_hosts;
  std::vector<std::string> k8s_pod;
  std::vector<std::string> k8s_svc;
  std::vector<std::string> dns;
  std::vector<std::string> docker;
  std::vector<std::string> localhost;
  // Nameservers of this file join `dns`; empty: none.
  std::string resolv_conf = "/etc/resolv.conf";
};

// The policy used without a file: localhost 127.0.0.0/8 and ::1; docker
// 172.17.0.0/16; internal hosts 10/8, 172.16/12, 192.168/16, 100.64/10,
// 169.254/16, fc00::/7 and fe80::/10; DNS from /etc/resolv.conf.
LENS_EXPORT FlowPolicy DefaultFlowPolicy();

// Parses policy YAML. Errors are InvalidArgument with the location:
// "policy.yaml:3:5: k8sSvc[1]: \"10.96.0.0/33\": prefix length 33 exceeds 32".
// Unknown top-level keys are errors (a typo must not silently classify
// everything as external). Keys absent from the file keep their defaults
// only for `localhost` and `resolvConf`; the other classes start empty.
LENS_EXPORT StatusOr<FlowPolicy> ParseFlowPolicy(std::string_view yaml,
                                                 std::string_view source_name);
// As ParseFlowPolicy, from a file (NotFound if it does not exist). Files
// over 1 MiB are rejected.
LENS_EXPORT StatusOr<FlowPolicy> LoadFlowPolicy(const std::string& path);

// Nameserver addresses of a resolv.conf text (comments, options, search
// lines and malformed addresses ignored; an IPv6 zone suffix "%eth0" is
// dropped).
LENS_EXPORT std::vector<IpAddress> ParseResolvConf(std::string_view text);

// Longest-prefix classification. Immutable after Create; Classify is
// thread-safe and allocation-free.
class LENS_EXPORT FlowClassifier {
 public:
  virtual ~FlowClassifier() = default;
  // Builds the prefix tables; reads `policy.resolv_conf` if set (a missing
  // file is not an error: no DNS servers from it; one that exists but cannot
  // be read fails with the read's code). InvalidArgument for a bad CIDR
  // (policies not made by ParseFlowPolicy are validated here too).
  static StatusOr<std::unique_ptr<FlowClassifier>> Create(
      const FlowPolicy& policy);
  virtual FlowClass Classify(const IpAddress& address) const = 0;
};

// The TCP ports this host listens on, from <proc_root>/net/tcp and tcp6
// (state 0A). A listener on 0.0.0.0 or :: matches any local address.
class LENS_EXPORT ListeningSockets {
 public:
  // Reads both files; a missing tcp6 (IPv6 disabled) is not an error.
  // Internal naming the file and line for malformed content.
  static StatusOr<ListeningSockets> Read(
      const std::string& proc_root = "/proc");
  // Parses the two files' text (tests, fixtures); tcp6 may be empty.
  static StatusOr<ListeningSockets> Parse(std::string_view tcp,
                                          std::string_view tcp6);
  bool IsListening(const IpAddress& local, uint16_t port) const;
  // Ingress if (local, port) is a listener, else egress.
  FlowDirection DirectionOf(const IpAddress& local, uint16_t port) const;
  size_t size() const { return listeners_.size(); }

 private:
  struct Listener {
    IpAddress address;
    uint16_t port;
  };
  std::vector<Listener> listeners_;
};

}  // namespace lens

#endif  // LENS_FLOW_POLICY_H_
