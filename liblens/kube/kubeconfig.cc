// LoadKubeconfig and InClusterConnection: where the API server is and the
// credentials to use, from a kubeconfig file (the format kubectl reads:
// clusters, users and contexts, each a named list entry) or from the
// service account a pod runs as. Errors name the file and the entry, never
// a secret.
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/kernel_file.h"
#include "lens/kube.h"

namespace lens {
namespace {

// Base64 (RFC 4648, with or without padding; whitespace ignored) as
// kubeconfig's *-data fields carry PEM. false on any other character.
bool DecodeBase64(std::string_view in, std::string* out) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  out->clear();
  uint32_t bits = 0;
  int count = 0;
  for (char c : in) {
    if (c == '=' || c == '\n' || c == '\r' || c == ' ' || c == '\t') continue;
    const int v = value(c);
    if (v < 0) return false;
    bits = (bits << 6) | static_cast<uint32_t>(v);
    if (++count == 4) {
      out->push_back(static_cast<char>(bits >> 16));
      out->push_back(static_cast<char>((bits >> 8) & 0xff));
      out->push_back(static_cast<char>(bits & 0xff));
      bits = 0;
      count = 0;
    }
  }
  if (count == 1) return false;
  if (count == 2) out->push_back(static_cast<char>(bits >> 4));
  if (count == 3) {
    out->push_back(static_cast<char>(bits >> 10));
    out->push_back(static_cast<char>((bits >> 2) & 0xff));
  }
  return true;
}

std::string Dir(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// The entry named `name` of the list `key` (clusters, users, contexts):
// its inner map (`cluster`, `user`, `context`).
StatusOr<YAML::Node> Entry(const YAML::Node& root, const char* key,
                           const char* inner, const std::string& name,
                           const std::string& where) {
  const YAML::Node list = root[key];
  if (list && !list.IsSequence()) {
    return InvalidArgumentError(where + ": " + key + " is not a list");
  }
  if (list) {
    for (const YAML::Node& entry : list) {
      if (!entry.IsMap() || !entry["name"]) continue;
      if (entry["name"].as<std::string>() != name) continue;
      const YAML::Node body = entry[inner];
      if (!body || !body.IsMap()) {
        return InvalidArgumentError(where + ": " + key + " entry \"" + name +
                                    "\" has no " + inner + " map");
      }
      return body;
    }
  }
  return NotFoundError(where + ": no " + key + " entry named \"" + name + "\"");
}

std::string Text(const YAML::Node& map, const char* key) {
  const YAML::Node v = map[key];
  return v && v.IsScalar() ? v.as<std::string>() : std::string();
}

// A path field, relative to the kubeconfig's folder; a *-data field,
// base64 PEM. Sets whichever is present.
Status FileOrData(const YAML::Node& map, const char* file_key,
                  const std::string& base, const std::string& where,
                  std::string* file, std::string* pem) {
  const std::string path = Text(map, file_key);
  if (!path.empty()) *file = path.front() == '/' ? path : base + "/" + path;
  const std::string data_key = std::string(file_key) + "-data";
  const std::string data = Text(map, data_key.c_str());
  if (!data.empty() && !DecodeBase64(data, pem)) {
    return InvalidArgumentError(where + ": " + data_key +
                                " is not valid base64");
  }
  return OkStatus();
}

StatusOr<KubeConnection> FromKubeconfig(const YAML::Node& root,
                                        const std::string& path,
                                        std::string context) {
  const std::string where = "kubeconfig " + path;
  if (!root.IsMap()) return InvalidArgumentError(where + ": not a YAML map");
  if (context.empty()) context = Text(root, "current-context");
  if (context.empty()) {
    return InvalidArgumentError(
        where + ": no current-context; name a context (--context)");
  }
  LENS_ASSIGN_OR_RETURN(YAML::Node ctx,
                        Entry(root, "contexts", "context", context, where));
  const std::string cluster_name = Text(ctx, "cluster");
  const std::string user_name = Text(ctx, "user");
  const std::string entry_where = where + " (context " + context + ")";
  LENS_ASSIGN_OR_RETURN(YAML::Node cluster, Entry(root, "clusters", "cluster",
                                                  cluster_name, entry_where));
  KubeConnection c;
  c.origin = entry_where;
  const std::string base = Dir(path);
  c.server = Text(cluster, "server");
  if (c.server.empty()) {
    return InvalidArgumentError(entry_where + ": cluster \"" + cluster_name +
                                "\" has no server");
  }
  LENS_RETURN_IF_ERROR(FileOrData(cluster, "certificate-authority", base,
                                  entry_where, &c.ca_file, &c.ca_pem));
  c.insecure_skip_tls_verify =
      Text(cluster, "insecure-skip-tls-verify") == "true";
  if (user_name.empty()) return c;  // anonymous
  LENS_ASSIGN_OR_RETURN(YAML::Node user,
                        Entry(root, "users", "user", user_name, entry_where));
  if (user["exec"] || user["auth-provider"]) {
    return InvalidArgumentError(
        entry_where + ": user \"" + user_name +
        "\" authenticates through an exec plugin or auth-provider, which "
        "Lens does not run; use a service-account token or a client "
        "certificate");
  }
  c.token = Text(user, "token");
  const std::string token_file = Text(user, "tokenFile");
  if (!token_file.empty()) {
    c.token_file =
        token_file.front() == '/' ? token_file : base + "/" + token_file;
  }
  LENS_RETURN_IF_ERROR(FileOrData(user, "client-certificate", base, entry_where,
                                  &c.client_cert_file, &c.client_cert_pem));
  LENS_RETURN_IF_ERROR(FileOrData(user, "client-key", base, entry_where,
                                  &c.client_key_file, &c.client_key_pem));
  return c;
}

}  // namespace

StatusOr<KubeConnection> LoadKubeconfig(const std::string& path,
                                        const std::string& context) {
  LENS_ASSIGN_OR_RETURN(std::string text, ReadKernelFile(path, 4u << 20));
  YAML::Node root;
  try {
    root = YAML::Load(text);
    return FromKubeconfig(root, path, context);
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError("kubeconfig " + path + ": " + e.what());
  }
}

StatusOr<KubeConnection> InClusterConnection(const std::string& account_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !*host || !port || !*port) {
    return FailedPreconditionError(
        "not running in a Kubernetes pod: KUBERNETES_SERVICE_HOST and "
        "KUBERNETES_SERVICE_PORT are not set (use --kubeconfig)");
  }
  KubeConnection c;
  c.origin = "in-cluster";
  const std::string h = host;
  // An IPv6 service address needs brackets in a URL.
  c.server = "https://" +
             (h.find(':') != std::string::npos ? "[" + h + "]" : h) + ":" +
             port;
  c.token_file = account_dir + "/token";
  c.ca_file = account_dir + "/ca.crt";
  for (const std::string* file : {&c.token_file, &c.ca_file}) {
    if (::access(file->c_str(), R_OK) != 0) {
      return FailedPreconditionError("in-cluster: cannot read " + *file + ": " +
                                     std::strerror(errno));
    }
  }
  return c;
}

}  // namespace lens
