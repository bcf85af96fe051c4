// An in-process Kubernetes API server for tests: speaks the real protocol
// over HTTP(S) on a loopback port, from the objects a test puts in it.
// Covers what Lens's client uses: discovery (/api, /apis, /api/v1,
// /apis/<group>/<version>), paginated lists (limit/continue), chunked watch
// streams of newline-delimited events (ADDED, MODIFIED, DELETED, BOOKMARK,
// ERROR), resourceVersion semantics with 410 Gone for versions older than
// the kept history, watches closed after timeoutSeconds, metadata-only
// responses (PartialObjectMetadata[List]), create/update/delete with 409 on
// conflicts (Lease updates with a stale resourceVersion), bearer token and
// TLS. Every request is logged (method, path, query, verb) so tests can
// check what a client asked for (RBAC).
//
// Objects are JSON text with apiVersion, kind and metadata; the server fills
// metadata.uid (when missing), metadata.resourceVersion (one counter for
// all objects, as etcd's revision) and metadata.creationTimestamp (when
// missing). Thread-safe: tests mutate objects while clients list and watch.
#ifndef LENS_TEST_SUPPORT_KUBE_API_SERVER_H_
#define LENS_TEST_SUPPORT_KUBE_API_SERVER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lens::test {

// A resource type the server serves.
struct KubeResourceType {
  std::string group;     // "" for the core group
  std::string version;   // "v1"
  std::string resource;  // plural, "pods"
  std::string kind;      // "Pod"
  bool namespaced = true;
};

struct KubeApiServerOptions {
  // "": no authentication. Otherwise every request must carry
  // "Authorization: Bearer <token>" (401 with a Status body otherwise).
  std::string token;
  // Serve HTTPS with test/fixtures/node/tls/kubelet.{crt,key} (signed by
  // test/fixtures/node/tls/ca.crt, valid for IP 127.0.0.1 and localhost).
  bool tls = false;
  // Watch events kept for resuming watches; a watch or continue token from
  // a resourceVersion older than the oldest kept is answered 410 Gone.
  size_t history_limit = 10000;
  // Upper bound on a watch's life (the API server's own
  // --min-request-timeout randomisation aside): a watch ends after
  // min(timeoutSeconds, max_watch_seconds).
  int max_watch_seconds = 1800;
  // With allowWatchBookmarks=true, a BOOKMARK event carrying the current
  // resourceVersion is sent after this long without other events.
  int bookmark_interval_ms = 1000;
  // 0: any port.
  int port = 0;
};

// One request as received.
struct KubeRequest {
  std::string method;  // "GET", "POST", "PUT", "DELETE", ...
  std::string path;    // without the query
  std::string query;   // raw query string ("" when none)
  // The Kubernetes verb: get, list, watch, create, update, patch, delete,
  // deletecollection (answered 405), "discovery" for /api, /apis and the
  // group/version documents, or "" for a path the server does not serve.
  std::string verb;
  std::string group;     // of the resource ("" core); "" for discovery
  std::string resource;  // plural; "" for discovery
  std::string namespace_name;
  std::string name;  // "" for collections
  int status = 0;    // the HTTP status answered
};

class KubeApiServer {
 public:
  explicit KubeApiServer(KubeApiServerOptions options = {});
  ~KubeApiServer();
  KubeApiServer(const KubeApiServer&) = delete;
  KubeApiServer& operator=(const KubeApiServer&) = delete;

  // Whether the server is listening; why not otherwise.
  bool ok() const;
  std::string error() const;

  // "http://127.0.0.1:<port>" or "https://127.0.0.1:<port>".
  std::string url() const;
  // The CA that signed the serving certificate (TLS only).
  static std::string CaFile();

  // Serves these in addition to the defaults: core v1 pods, nodes,
  // namespaces; apps/v1 deployments, replicasets, statefulsets; batch/v1
  // jobs, cronjobs; coordination.k8s.io/v1 leases; kubeflow.org/v1
  // pytorchjobs, mpijobs, kubeflow.org/v2beta1 mpijobs;
  // jobset.x-k8s.io/v1alpha2 jobsets; ray.io/v1
  // rayjobs, rayclusters; trainer.kubeflow.org/v1alpha1 trainjobs.
  void AddResource(const KubeResourceType& type);

  // Creates an object (its apiVersion and kind pick the resource type; a
  // namespaced kind without metadata.namespace goes to "default"). Returns
  // the stored JSON with uid, resourceVersion and creationTimestamp filled,
  // or "" when it exists already or the kind is unknown.
  std::string Create(const std::string& object_json);
  // Replaces an existing object (matched by apiVersion, kind, namespace and
  // name) regardless of the resourceVersion it carries; a new
  // resourceVersion; MODIFIED to watchers. Returns the stored JSON or "".
  std::string Update(const std::string& object_json);
  // Removes it; DELETED (with a new resourceVersion) to watchers.
  bool Delete(const std::string& api_version, const std::string& kind,
              const std::string& namespace_name, const std::string& name);
  // The stored object, or "".
  std::string Get(const std::string& api_version, const std::string& kind,
                  const std::string& namespace_name,
                  const std::string& name) const;

  // The current resourceVersion (the last assigned).
  uint64_t resource_version() const;
  // Forgets the watch history (etcd compaction): any watch or continue from
  // a resourceVersion before now is answered 410 Gone.
  void Compact();
  // Ends every open watch stream cleanly (as at timeoutSeconds).
  void CloseWatches();
  // Stops listening, drops every connection, and listens again on the same
  // port (an API server restart); objects and history are kept.
  bool Restart();
  // Stops listening (the API server is down) until Start().
  void Stop();
  bool Start();

  // Answers the next `count` requests whose path contains `path_part` with
  // `status` (e.g. 429, 500, 503) and a Status body, with Retry-After: 1
  // for 429; for fault injection. With `body`, that body (as JSON) instead
  // of the Status: an answer the client must not trust.
  void FailNext(const std::string& path_part, int status, int count = 1,
                std::string body = {});

  // Every request so far, in order.
  std::vector<KubeRequest> Requests() const;
  void ClearRequests();
  // Watches open now.
  int open_watches() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lens::test

#endif  // LENS_TEST_SUPPORT_KUBE_API_SERVER_H_
