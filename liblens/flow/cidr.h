// A parsed CIDR ("10.96.0.0/12", "fd00::/8", a bare address = host prefix),
// shared by the policy parser and the classifier.
#ifndef LENS_FLOW_CIDR_H_
#define LENS_FLOW_CIDR_H_

#include <string_view>

#include "lens/flow_policy.h"

namespace lens::flow {

struct Cidr {
  IpAddress prefix;  // host bits cleared; IPv4-mapped IPv6 stored as IPv4
  int length = 0;    // 0..32 or 0..128
};

// InvalidArgument saying what is wrong with `text` ("prefix length 33
// exceeds 32", "\"10.0.0\" is not an IPv4 or IPv6 address").
StatusOr<Cidr> ParseCidr(std::string_view text);

}  // namespace lens::flow

#endif  // LENS_FLOW_CIDR_H_
