// LoadKubeconfig, KubeconfigFromText and InClusterConnection: where the API
// server is and the credentials to use, from a kubeconfig (the format
// kubectl reads: clusters, users and contexts, each a named list entry) in
// a file or in text (a Secret's value), or from the service account a pod
// runs as. Errors name the file and the entry, never a secret.
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/kernel_file.h"
#include "core/text.h"
#include "lens/kube.h"

namespace lens {
namespace {

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

// A kubeconfig without a file beside it (text from a Secret) can only
// carry credentials inline: a path would name a file of some other machine.
Status RefuseFileField(const YAML::Node& map, const char* key,
                       const char* instead, const std::string& where) {
  if (Text(map, key).empty()) return OkStatus();
  return InvalidArgumentError(where + ": " + key +
                              " names a file, which a kubeconfig held as "
                              "text cannot use; use " +
                              instead);
}

// A path field, relative to the kubeconfig's folder; a *-data field,
// base64 PEM. Sets whichever is present. `base` empty: text without a
// folder, so a path is refused.
Status FileOrData(const YAML::Node& map, const char* file_key,
                  const std::string& base, const std::string& where,
                  std::string* file, std::string* pem) {
  const std::string data_key = std::string(file_key) + "-data";
  if (base.empty()) {
    LENS_RETURN_IF_ERROR(
        RefuseFileField(map, file_key, data_key.c_str(), where));
  }
  const std::string path = Text(map, file_key);
  if (!path.empty()) *file = path.front() == '/' ? path : base + "/" + path;
  const std::string data = Text(map, data_key.c_str());
  if (!data.empty() && !Base64Decode(data, pem)) {
    return InvalidArgumentError(where + ": " + data_key +
                                " is not valid base64");
  }
  return OkStatus();
}

// `where` names the source in errors; `base` is the folder relative paths
// start from ("" for text, where paths are refused).
StatusOr<KubeConnection> FromKubeconfig(const YAML::Node& root,
                                        const std::string& where,
                                        const std::string& base,
                                        std::string context) {
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
  if (base.empty()) {
    LENS_RETURN_IF_ERROR(
        RefuseFileField(user, "tokenFile", "token",
                        entry_where + ": user \"" + user_name + "\""));
  }
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
    return FromKubeconfig(root, "kubeconfig " + path, Dir(path), context);
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError("kubeconfig " + path + ": " + e.what());
  }
}

StatusOr<KubeConnection> KubeconfigFromText(std::string_view text,
                                            const std::string& origin,
                                            const std::string& context) {
  if (text.size() > (4u << 20)) {
    return ResourceExhaustedError(origin + ": kubeconfig larger than 4 MiB");
  }
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    return FromKubeconfig(root, origin, "", context);
  } catch (const YAML::Exception& e) {
    // The position only: yaml-cpp's message may quote the text, and this
    // text holds credentials.
    return InvalidArgumentError(
        origin + ": not a valid kubeconfig" +
        (e.mark.is_null() ? std::string(" (a field of the wrong type)")
                          : " (YAML error at line " +
                                std::to_string(e.mark.line + 1) + ")"));
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
