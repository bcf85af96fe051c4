// The Kubernetes client: a connection from a kubeconfig file or from inside
// a pod, requests and watch streams over one keep-alive HTTP client,
// informers (a paginated list, then a watch that resumes from the last seen
// resourceVersion and relists on 410 Gone), discovery of any kind's
// resource, and leader election on a coordination.k8s.io/v1 Lease.
//
// Lens never writes to an object it does not own: the only writes made
// through this client are the leader elector's to its own Lease and
// lens-multicluster's to the Secret it publishes (docs/multicluster.md).
#ifndef LENS_KUBE_H_
#define LENS_KUBE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lens/export.h"
#include "lens/status.h"

namespace lens {

// How to reach one API server, and as whom. Plain value; never logged or
// put in an error message whole (it holds credentials).
struct LENS_EXPORT KubeConnection {
  std::string server;  // "https://10.0.0.1:6443", "http://127.0.0.1:8001"
  // Bearer token, or a file holding it (re-read when the file changes:
  // projected service-account tokens rotate). The token wins when both are
  // set, as kubectl has it.
  std::string token;
  std::string token_file;
  // The cluster CA: a PEM file or PEM text; neither: the system's CAs.
  std::string ca_file;
  std::string ca_pem;
  // Client certificate and key: files or PEM text.
  std::string client_cert_file;
  std::string client_cert_pem;
  std::string client_key_file;
  std::string client_key_pem;
  bool insecure_skip_tls_verify = false;
  // The name the server's certificate must hold (and the TLS SNI), when it
  // is not the host of `server`: a server reached at an address no
  // certificate could name ahead (a pod IP) that holds a certificate for a
  // fixed name. The connection still goes to `server`'s host and port. Only
  // for https; empty: `server`'s host is verified. (Kubeconfig's
  // `tls-server-name` means the same; LoadKubeconfig does not read it yet.)
  std::string tls_server_name;
  // Where it came from, for messages: "kubeconfig /path (context ctx)" or
  // "in-cluster".
  std::string origin;
};

// The connection of a kubeconfig file's `context` (its current-context
// when empty): cluster server, certificate-authority(-data),
// insecure-skip-tls-verify, user token, tokenFile, client-certificate(-data)
// and client-key(-data); relative paths are relative to the file. Errors
// (InvalidArgument, NotFound) name the file and the entry, never a secret.
// An exec or auth-provider user is refused with a message saying so.
LENS_EXPORT StatusOr<KubeConnection> LoadKubeconfig(
    const std::string& path, const std::string& context = "");

// The connection of a kubeconfig held as text rather than in a file (a
// Secret's value): as LoadKubeconfig, but with nothing beside it to read,
// so only inline credentials are accepted (server, certificate-authority-
// data, insecure-skip-tls-verify, token, client-certificate-data,
// client-key-data); a file path (certificate-authority, tokenFile,
// client-certificate, client-key) is InvalidArgument saying which field to
// use instead. `origin` names the text in every error and in
// KubeConnection::origin ("Secret lens/lens-clusters key us-east-1");
// errors never quote the text or a credential.
LENS_EXPORT StatusOr<KubeConnection> KubeconfigFromText(
    std::string_view text, const std::string& origin,
    const std::string& context = "");

// The connection of a pod: https://$KUBERNETES_SERVICE_HOST:
// $KUBERNETES_SERVICE_PORT with the service account's token file (re-read as
// it rotates) and CA under `account_dir`. FailedPrecondition naming what is
// missing outside a cluster.
LENS_EXPORT StatusOr<KubeConnection> InClusterConnection(
    const std::string& account_dir =
        "/var/run/secrets/kubernetes.io/serviceaccount");

// A resource type: where its objects live in the API.
struct LENS_EXPORT KubeResource {
  std::string group;     // "" for the core group
  std::string version;   // "v1"
  std::string resource;  // plural: "pods"
  std::string kind;      // "Pod"
  bool namespaced = true;

  // "v1" or "<group>/<version>".
  std::string ApiVersion() const;
  // The collection path ("" namespace: all namespaces, or a cluster-scoped
  // type), or with `name` one object's path.
  std::string Path(std::string_view namespace_name = "",
                   std::string_view name = "") const;
};

struct LENS_EXPORT KubeClientOptions {
  // A request's limit (watches: until the first byte); a watch with no
  // byte for `watch_idle` (bookmarks included) is dropped and resumed.
  std::chrono::milliseconds request_timeout{30000};
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds watch_idle{120000};
  // Responses larger than this are refused (ResourceExhausted); a watch
  // event line larger than this ends the watch.
  uint64_t max_response_bytes = 256ull << 20;
  std::string user_agent = "lens";
};

// One HTTP answer.
struct LENS_EXPORT KubeResponse {
  int status = 0;
  std::string body;
  // Seconds from Retry-After (429, 503); 0 when absent.
  int retry_after_seconds = 0;
};

// Requests and watch streams to one API server over keep-alive
// connections. Thread-safe: each call takes its own connection from a pool.
// Errors name the method, the server's URL and path and the HTTP status
// with the Status message; never a token or key.
class LENS_EXPORT KubeClient {
 public:
  virtual ~KubeClient() = default;

  // InvalidArgument for a connection without a server or with malformed
  // credentials, NotFound for credential files that do not exist (named).
  static StatusOr<std::unique_ptr<KubeClient>> Create(
      const KubeConnection& connection, const KubeClientOptions& options = {});

  // One request; any HTTP status is a KubeResponse (the caller decides),
  // transport failures are Unavailable (connection refused, reset, TLS)
  // or DeadlineExceeded. `path` includes the query. `accept` is the Accept
  // header; a body is sent as application/json.
  virtual StatusOr<KubeResponse> Request(
      std::string_view method, std::string_view path,
      std::string_view body = "",
      std::string_view accept = "application/json") = 0;

  // A GET that streams the body one line at a time to `on_line` (watch
  // events), until the server ends it (OK), `on_line` returns false (OK),
  // `*stop` becomes true (Cancelled; checked about once a second), the
  // stream is idle past watch_idle (DeadlineExceeded) or fails
  // (Unavailable). A non-2xx answer is returned as a KubeResponse in
  // `*refused` with OK status and no line delivered.
  virtual Status Stream(std::string_view path, std::string_view accept,
                        const std::function<bool(std::string_view)>& on_line,
                        const std::atomic<bool>* stop,
                        KubeResponse* refused) = 0;

  // "https://host:port" as configured, for messages.
  virtual const std::string& server() const = 0;
};

// `value` as a URL query parameter value: RFC 3986 unreserved characters
// kept, every other byte percent-encoded ("app=x" -> "app%3Dx").
LENS_EXPORT std::string KubeQueryEscape(std::string_view value);

// The error for a non-2xx answer: "<method> <server><path>: HTTP <status>
// <reason>: <the Status message>", with the code that matches (NotFound
// 404, PermissionDenied 401/403, AlreadyExists/Aborted 409,
// FailedPrecondition 410, ResourceExhausted 429, Unavailable 5xx, ...).
LENS_EXPORT Status KubeError(std::string_view method, std::string_view server,
                             std::string_view path,
                             const KubeResponse& response);

// Maps apiVersion/kind to resources from the server's discovery documents
// (/api/v1, /apis/<group>/<version>), so any owner kind resolves, custom
// resources included. Each group/version is fetched once and cached.
// Thread-safe.
class LENS_EXPORT KubeDiscovery {
 public:
  explicit KubeDiscovery(KubeClient* client);  // not owned; must outlive
  ~KubeDiscovery();
  KubeDiscovery(const KubeDiscovery&) = delete;
  KubeDiscovery& operator=(const KubeDiscovery&) = delete;

  // NotFound when the server does not serve that group/version or kind.
  StatusOr<KubeResource> ResourceFor(std::string_view api_version,
                                     std::string_view kind);

 private:
  struct State;
  KubeClient* client_;
  std::unique_ptr<State> state_;
};

// An object as an informer holds it: its metadata, decoded, and its JSON
// (the whole object, or "" when the informer keeps only metadata for it).
struct LENS_EXPORT KubeObject {
  std::string uid;
  std::string namespace_name;
  std::string name;
  std::string resource_version;
  std::string json;
};

struct LENS_EXPORT KubeInformerOptions {
  KubeResource resource;
  std::string namespace_name;  // "" for all
  std::string label_selector;
  std::string field_selector;
  // Ask for metadata only (PartialObjectMetadata): owners need no spec.
  bool metadata_only = false;
  // Which objects keep their whole JSON in the cache; the others keep only
  // metadata (handlers still get each new state whole; the old state of
  // OnUpdate and OnDelete comes from the cache). Empty: all. Called on the
  // informer's thread with the full object.
  std::function<bool(std::string_view json)> keep_json;
  uint32_t page_size = 500;  // list `limit`
  // A watch asks the server to end it after a random time in this range,
  // as client-go does, so that watches spread over API server replicas.
  std::chrono::seconds min_watch_timeout{300};
  std::chrono::seconds max_watch_timeout{600};
  // Backoff after errors (429, 5xx, connection): doubles from `initial`
  // up to `max`, with up to 50% jitter; Retry-After is honoured.
  std::chrono::milliseconds initial_backoff{500};
  std::chrono::milliseconds max_backoff{30000};
};

// What an informer tells its handler. Called on the informer's thread, in
// the order things happened; a handler must not block for long.
class LENS_EXPORT KubeEventHandler {
 public:
  virtual ~KubeEventHandler() = default;
  virtual void OnAdd(const KubeObject& object) = 0;
  virtual void OnUpdate(const KubeObject& old_object,
                        const KubeObject& new_object) = 0;
  // `last_known`: the object as last seen. `seen_gone`: true when the
  // deletion itself was not observed (the object was missing from a
  // relist after a watch expired), so the deletion time is unknown and is
  // when Lens saw it gone.
  virtual void OnDelete(const KubeObject& last_known, bool seen_gone) = 0;
  // The first list (and each relist) has been delivered in full.
  virtual void OnSynced() {}
};

// What an informer did, for metrics. Plain value.
struct LENS_EXPORT KubeInformerStats {
  uint64_t lists = 0;           // full lists (the first included)
  uint64_t relists = 0;         // after 410 Gone
  uint64_t watches = 0;         // watch requests started
  uint64_t watch_restarts = 0;  // watches resumed after the server ended one
  uint64_t events = 0;          // watch events applied (bookmarks excluded)
  uint64_t bookmarks = 0;
  uint64_t errors = 0;   // failed requests (each followed by a backoff)
  uint64_t objects = 0;  // in the cache now
  bool synced = false;
  std::string resource_version;  // the last seen
  std::string last_error;        // "" when none yet
};

// List then watch one resource type, keeping a cache by uid and by
// namespace/name and telling a handler of every change. Run() blocks until
// Stop(); other methods are thread-safe.
class LENS_EXPORT KubeInformer {
 public:
  // `client` and `handler` are not owned and must outlive the informer.
  KubeInformer(KubeClient* client, KubeInformerOptions options,
               KubeEventHandler* handler);
  ~KubeInformer();
  KubeInformer(const KubeInformer&) = delete;
  KubeInformer& operator=(const KubeInformer&) = delete;

  // Lists, then watches until Stop(); returns OK after Stop(), or
  // InvalidArgument for options that cannot work (a page size of 0). All
  // other failures are retried with backoff.
  Status Run();
  void Stop();

  // Cached objects; NotFound when absent.
  StatusOr<KubeObject> GetByUid(std::string_view uid) const;
  StatusOr<KubeObject> Get(std::string_view namespace_name,
                           std::string_view name) const;
  std::vector<KubeObject> List() const;
  KubeInformerStats Stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A replica's leader-election identity: $POD_NAME (the downward API), else
// the host name, else `fallback`; with "_<pid>", so two processes on one host
// differ.
LENS_EXPORT std::string DefaultLeaderIdentity(std::string_view fallback);

struct LENS_EXPORT KubeLeaderOptions {
  std::string namespace_name = "lens";
  std::string lease_name = "lens-controller";
  std::string identity;  // required: unique per replica (pod name + uid)
  std::chrono::milliseconds lease_duration{15000};
  std::chrono::milliseconds renew_deadline{10000};
  std::chrono::milliseconds retry_period{2000};
};

// Leader election on a coordination.k8s.io/v1 Lease: acquires it when free
// or expired, renews it every retry_period, and every update is guarded by
// the Lease's resourceVersion (a 409 means another replica won). Run()
// blocks until Stop(); IsLeader() is thread-safe.
class LENS_EXPORT KubeLeaderElector {
 public:
  KubeLeaderElector(KubeClient* client, KubeLeaderOptions options);
  ~KubeLeaderElector();
  KubeLeaderElector(const KubeLeaderElector&) = delete;
  KubeLeaderElector& operator=(const KubeLeaderElector&) = delete;

  // InvalidArgument for an empty identity or renew_deadline >=
  // lease_duration; OK after Stop(), which also releases a held lease.
  Status Run();
  void Stop();

  // True only while a renewal succeeded less than renew_deadline ago: a
  // replica that cannot renew stops being leader at once, before the lease
  // expires for the others. Check before every write.
  bool IsLeader() const;
  // Transitions seen (for metrics).
  uint64_t transitions() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lens

#endif  // LENS_KUBE_H_
