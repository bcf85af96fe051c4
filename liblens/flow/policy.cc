// The flow policy file (YAML) and resolv.conf.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

#include "core/config_decode.h"
#include "core/kernel_file.h"
#include "flow/cidr.h"
#include "lens/flow_policy.h"

namespace lens {
namespace flow {

StatusOr<Cidr> ParseCidr(std::string_view text) {
  std::string_view addr = text;
  int length = -1;
  if (size_t slash = text.find('/'); slash != std::string_view::npos) {
    addr = text.substr(0, slash);
    std::string_view len = text.substr(slash + 1);
    auto [end, ec] =
        std::from_chars(len.data(), len.data() + len.size(), length);
    if (len.empty() || ec != std::errc() || end != len.data() + len.size() ||
        length < 0) {
      return InvalidArgumentError("\"" + std::string(text) +
                                  "\": prefix length \"" + std::string(len) +
                                  "\" is not a number in 0..128");
    }
  }
  LENS_ASSIGN_OR_RETURN(IpAddress ip, IpAddress::Parse(addr));
  const int bits = ip.family == 4 ? 32 : 128;
  if (length < 0) length = bits;
  if (length > bits) {
    return InvalidArgumentError("\"" + std::string(text) +
                                "\": prefix length " + std::to_string(length) +
                                " exceeds " + std::to_string(bits));
  }
  // ::ffff:a.b.c.d/96+n is the IPv4 prefix a.b.c.d/n.
  IpAddress unmapped = ip.Unmapped();
  if (unmapped.family == 4 && ip.family == 6) {
    if (length < 96) {
      return InvalidArgumentError(
          "\"" + std::string(text) +
          "\": an IPv4-mapped prefix needs /96 or more");
    }
    ip = unmapped;
    length -= 96;
  }
  for (int i = 0; i < 16; ++i) {
    const int keep = std::clamp(length - i * 8, 0, 8);
    ip.bytes[i] &= static_cast<uint8_t>(0xff00 >> keep);
  }
  return Cidr{ip, length};
}

}  // namespace flow

namespace {

using config::Ctx;
using PolicyList = std::vector<std::string> FlowPolicy::*;

struct PolicyKey {
  std::string_view key;
  PolicyList list;
};
constexpr PolicyKey kPolicyKeys[] = {
    {"internalHosts", &FlowPolicy::internal_hosts},
    {"k8sPod", &FlowPolicy::k8s_pod},
    {"k8sSvc", &FlowPolicy::k8s_svc},
    {"dns", &FlowPolicy::dns},
    {"docker", &FlowPolicy::docker},
    {"localhost", &FlowPolicy::localhost},
};

// A list of CIDR strings (a single string is a one-element list).
Status DecodeCidrs(const Ctx& ctx, const YAML::Node& node,
                   const std::string& key, std::vector<std::string>* out) {
  out->clear();
  if (node.IsNull()) return OkStatus();
  std::vector<YAML::Node> items;
  if (node.IsScalar()) {
    items.push_back(node);
  } else if (node.IsSequence()) {
    for (const auto& item : node) items.push_back(item);
  } else {
    return ctx.Error(node, key, "expected a list of CIDRs, got a map");
  }
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string path =
        node.IsSequence() ? key + "[" + std::to_string(i) + "]" : key;
    LENS_ASSIGN_OR_RETURN(std::string text,
                          config::Scalar(ctx, items[i], path, "a CIDR"));
    if (auto cidr = flow::ParseCidr(text); !cidr.ok()) {
      return ctx.Error(items[i], path, cidr.status().message());
    }
    out->push_back(text);
  }
  return OkStatus();
}

}  // namespace

FlowPolicy DefaultFlowPolicy() {
  FlowPolicy p;
  p.localhost = {"127.0.0.0/8", "::1/128"};
  p.docker = {"172.17.0.0/16"};
  p.internal_hosts = {"10.0.0.0/8",    "172.16.0.0/12",  "192.168.0.0/16",
                      "100.64.0.0/10", "169.254.0.0/16", "fc00::/7",
                      "fe80::/10"};
  return p;
}

StatusOr<FlowPolicy> ParseFlowPolicy(std::string_view yaml,
                                     std::string_view source_name) {
  Ctx ctx;
  ctx.source = std::string(source_name);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(
        ctx.source + ":" + std::to_string(e.mark.line + 1) + ":" +
        std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  FlowPolicy policy;
  policy.localhost = DefaultFlowPolicy().localhost;
  if (root.IsNull()) return policy;
  if (!root.IsMap()) {
    return ctx.Error(
        root, "(top level)",
        "expected a map, got " + std::string(config::KindName(root)));
  }
  for (const auto& entry : root) {
    const std::string key = entry.first.Scalar();
    if (key == "resolvConf") {
      if (entry.second.IsNull()) {
        policy.resolv_conf.clear();
        continue;
      }
      LENS_ASSIGN_OR_RETURN(policy.resolv_conf,
                            config::Scalar(ctx, entry.second, key, "a path"));
      continue;
    }
    const PolicyKey* rule = nullptr;
    for (const PolicyKey& k : kPolicyKeys) {
      if (k.key == key) rule = &k;
    }
    if (!rule) {
      return ctx.Error(entry.first, key,
                       "unknown key (known: internalHosts, k8sPod, k8sSvc, "
                       "dns, docker, localhost, resolvConf)");
    }
    LENS_RETURN_IF_ERROR(
        DecodeCidrs(ctx, entry.second, key, &(policy.*rule->list)));
  }
  return policy;
}

StatusOr<FlowPolicy> LoadFlowPolicy(const std::string& path) {
  StatusOr<std::string> text = ReadKernelFile(path, size_t{1} << 20);
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kResourceExhausted) {
      return InvalidArgumentError(path + ": policy files are limited to 1 MiB");
    }
    return text.status();
  }
  return ParseFlowPolicy(*text, path);
}

std::vector<IpAddress> ParseResolvConf(std::string_view text) {
  std::vector<IpAddress> servers;
  while (!text.empty()) {
    size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view()
                                         : text.substr(eol + 1);
    line = line.substr(0, line.find_first_of("#;"));
    line = TrimKernelValue(line);
    constexpr std::string_view kKey = "nameserver";
    if (line.substr(0, kKey.size()) != kKey || line.size() == kKey.size() ||
        (line[kKey.size()] != ' ' && line[kKey.size()] != '\t')) {
      continue;
    }
    std::string_view addr = TrimKernelValue(line.substr(kKey.size()));
    addr = addr.substr(0, addr.find_first_of(" \t"));
    addr = addr.substr(0, addr.find('%'));  // fe80::1%eth0
    if (auto ip = IpAddress::Parse(addr); ip.ok()) servers.push_back(*ip);
  }
  return servers;
}

}  // namespace lens
