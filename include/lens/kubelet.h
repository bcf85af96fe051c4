// The kubelet of this node: how to reach it (its own small HTTP/1.1 client,
// OpenSSL for https), and its documents: ephemeral storage per pod and node
// (/stats/summary) and the GPUs allocated to pods (/pods).
#ifndef LENS_KUBELET_H_
#define LENS_KUBELET_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lens/export.h"
#include "lens/status.h"

namespace lens {

// Ephemeral storage as the kubelet's /stats/summary reports it.
struct LENS_EXPORT PodEphemeralStorage {
  std::string namespace_name;
  std::string name;
  std::string uid;
  std::optional<uint64_t> used_bytes;
  std::optional<uint64_t> capacity_bytes;
  std::optional<uint64_t> available_bytes;
  bool operator==(const PodEphemeralStorage&) const = default;
};
struct LENS_EXPORT NodeEphemeralStorage {
  std::string node_name;
  // The node's root filesystem (node.fs).
  std::optional<uint64_t> capacity_bytes;
  std::optional<uint64_t> used_bytes;
  std::optional<uint64_t> available_bytes;
  std::vector<PodEphemeralStorage> pods;  // sorted by namespace, name
  bool operator==(const NodeEphemeralStorage&) const = default;
};

// Parses a kubelet /stats/summary document (the summary API v1alpha1 JSON).
// Errors: InvalidArgument with the JSON error offset or the field that has
// the wrong type ("pods[3].ephemeral-storage.usedBytes: expected a number").
LENS_EXPORT StatusOr<NodeEphemeralStorage> ParseKubeletStatsSummary(
    std::string_view json);

// GPUs the kubelet has allocated to pods on this node (kubelet /pods: limits
// of amd.com/gpu and nvidia.com/gpu of pods not yet Succeeded/Failed, each pod
// counted once).
struct LENS_EXPORT GpuAllocation {
  int64_t allocated = 0;
  int64_t pods = 0;  // pods holding at least one GPU
  bool operator==(const GpuAllocation&) const = default;
};

// Sums the GPU resources (amd.com/gpu, nvidia.com/gpu; limits, else
// requests) of every container of pods whose phase is not Succeeded or
// Failed, from a kubelet /pods document (a v1 PodList). Init containers run
// before the others, so a pod holds max(largest init container, sum of
// containers). InvalidArgument naming the JSON path of a bad field.
LENS_EXPORT StatusOr<GpuAllocation> ParseKubeletPodsGpuAllocation(
    std::string_view json);

// How to reach a kubelet.
struct LENS_EXPORT KubeletOptions {
  // Base URL: "https://10.0.0.5:10250" or "http://127.0.0.1:10255".
  std::string url;
  // Bearer token file (a service account token); empty: no Authorization.
  std::string token_file;
  // CA bundle for https; empty: system CAs. insecure_skip_verify disables
  // verification (the kubelet's self-signed certificate).
  std::string ca_file;
  bool insecure_skip_verify = false;
  // Client certificate (PEM, leaf first, chain may follow) and its private
  // key (PEM), for kubelets that authenticate clients by X.509
  // (--client-ca-file); both or neither. Sent with the bearer token when
  // both are set. Re-read on every call (rotated certificates are picked up).
  std::string client_cert_file;
  std::string client_key_file;
  std::chrono::milliseconds timeout{5000};
  // Responses larger than this are refused (ResourceExhausted).
  uint64_t max_response_bytes = uint64_t{64} << 20;

  // Checks what can be checked before the first request: the URL (http or
  // https, a host, a port), timeout > 0, client certificate and key set
  // together, readable, PEM, and the key matching the certificate, and a
  // readable CA file. InvalidArgument naming the field and file (never file
  // contents).
  Status Validate() const;
};

// GETs `path` ("/stats/summary") from the kubelet. Errors: Unavailable
// (connection, TLS, timeout; message names the URL), PermissionDenied (401,
// 403), Unknown for other non-2xx statuses (with the status and the start of
// the body).
LENS_EXPORT StatusOr<std::string> KubeletGet(const KubeletOptions& options,
                                             std::string_view path);

}  // namespace lens

#endif  // LENS_KUBELET_H_
