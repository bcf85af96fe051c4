// Longest-prefix classification: per address family, one sorted table of
// masked prefixes per prefix length in use, searched from the longest length
// down (a policy uses a handful of lengths, so a lookup is a few binary
// searches and never allocates).
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <vector>

#include "core/kernel_file.h"
#include "flow/cidr.h"
#include "lens/flow_policy.h"

namespace lens {
namespace {

// An address as a 128-bit number (IPv4 in the high 32 bits).
struct Bits {
  uint64_t hi = 0, lo = 0;
  friend bool operator<(const Bits& a, const Bits& b) {
    return a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo;
  }
  friend bool operator==(const Bits&, const Bits&) = default;
};

Bits ToBits(const IpAddress& a) {
  Bits b;
  for (int i = 0; i < 8; ++i) b.hi = (b.hi << 8) | a.bytes[i];
  for (int i = 8; i < 16; ++i) b.lo = (b.lo << 8) | a.bytes[i];
  if (a.family == 4) b.lo = 0, b.hi &= 0xffffffff00000000ull;
  return b;
}

Bits Mask(Bits b, int length) {
  if (length <= 0) return {};
  if (length < 64) return {b.hi & (~0ull << (64 - length)), 0};
  if (length == 64) return {b.hi, 0};
  if (length < 128) return {b.hi, b.lo & (~0ull << (128 - length))};
  return b;
}

struct Entry {
  Bits prefix;
  FlowClass cls;
  friend bool operator<(const Entry& a, const Entry& b) {
    return a.prefix < b.prefix;
  }
};

struct Table {
  int length;
  std::vector<Entry> entries;  // sorted by prefix, unique
};

class FlowClassifierImpl final : public FlowClassifier {
 public:
  void Add(const flow::Cidr& cidr, FlowClass cls) {
    auto& tables = cidr.prefix.family == 4 ? v4_ : v6_;
    auto it = std::find_if(tables.begin(), tables.end(), [&](const Table& t) {
      return t.length == cidr.length;
    });
    if (it == tables.end()) {
      tables.push_back({cidr.length, {}});
      it = tables.end() - 1;
    }
    it->entries.push_back({ToBits(cidr.prefix), cls});
  }

  void Finish() {
    for (auto* tables : {&v4_, &v6_}) {
      std::sort(
          tables->begin(), tables->end(),
          [](const Table& a, const Table& b) { return a.length > b.length; });
      for (Table& t : *tables) {
        // Equal prefixes: the class listed first in FlowClass wins.
        std::stable_sort(t.entries.begin(), t.entries.end(),
                         [](const Entry& a, const Entry& b) {
                           return a.prefix == b.prefix ? a.cls < b.cls
                                                       : a.prefix < b.prefix;
                         });
        t.entries.erase(std::unique(t.entries.begin(), t.entries.end(),
                                    [](const Entry& a, const Entry& b) {
                                      return a.prefix == b.prefix;
                                    }),
                        t.entries.end());
      }
    }
  }

  FlowClass Classify(const IpAddress& address) const override {
    const IpAddress a = address.Unmapped();
    const Bits bits = ToBits(a);
    for (const Table& t : a.family == 4 ? v4_ : v6_) {
      const Entry probe{Mask(bits, t.length), FlowClass::kExternal};
      auto it = std::lower_bound(t.entries.begin(), t.entries.end(), probe);
      if (it != t.entries.end() && it->prefix == probe.prefix) return it->cls;
    }
    return FlowClass::kExternal;
  }

 private:
  std::vector<Table> v4_, v6_;  // longest length first
};

}  // namespace

StatusOr<std::unique_ptr<FlowClassifier>> FlowClassifier::Create(
    const FlowPolicy& policy) {
  auto impl = std::make_unique<FlowClassifierImpl>();
  const std::pair<const std::vector<std::string>*, FlowClass> lists[] = {
      {&policy.localhost, FlowClass::kLocalhost},
      {&policy.dns, FlowClass::kDns},
      {&policy.k8s_svc, FlowClass::kK8sSvc},
      {&policy.k8s_pod, FlowClass::kK8sPod},
      {&policy.docker, FlowClass::kDocker},
      {&policy.internal_hosts, FlowClass::kInternal},
  };
  for (const auto& [list, cls] : lists) {
    for (const std::string& text : *list) {
      StatusOr<flow::Cidr> cidr = flow::ParseCidr(text);
      if (!cidr.ok()) {
        return cidr.status().WithContext(std::string("flow policy ") +
                                         std::string(FlowClassName(cls)));
      }
      impl->Add(*cidr, cls);
    }
  }
  if (!policy.resolv_conf.empty()) {
    // A missing resolv.conf is not an error: no DNS servers from it. One that
    // exists but cannot be read is, or DNS traffic would silently count as
    // internal or external.
    StatusOr<std::string> text = ReadKernelFile(policy.resolv_conf, 1 << 20);
    if (text.ok()) {
      for (const IpAddress& server : ParseResolvConf(*text)) {
        const IpAddress u = server.Unmapped();
        impl->Add({u, u.family == 4 ? 32 : 128}, FlowClass::kDns);
      }
    } else if (text.status().code() != StatusCode::kNotFound) {
      return text.status().WithContext("flow policy resolvConf");
    }
  }
  impl->Finish();
  return std::unique_ptr<FlowClassifier>(std::move(impl));
}

}  // namespace lens
