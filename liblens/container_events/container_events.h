// The node -> lens-jobs container event pipeline (docs/containers.md).
//
// Agent side: a ContainerEventSender keeps one gRPC stream to lens-jobs and
// sends every change the ContainerTracker reports, with a per-node sequence
// number and the container's full state, so the server can apply any message
// twice. Unacked messages are kept (bounded) and resent after a reconnect,
// followed by a full snapshot.
//
//   lens::ContainerEventSender sender({.target = "lens-jobs:50051",
//                                      .node = "gpu-node-7"});
//   tracker.SetListener([&](const auto& c) { sender.Publish(c); });
//   tracker.SetResyncListener([&](const auto& all) {
//   sender.PublishSnapshot(all); }); sender.Start();
//
// Server side: a ContainerEventServer (in lens-jobs) stores containers, their
// devices and their events through the Store, and acks what is stored.
#ifndef LENS_CONTAINER_EVENTS_CONTAINER_EVENTS_H_
#define LENS_CONTAINER_EVENTS_CONTAINER_EVENTS_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lens/containers.h"
#include "lens/status.h"
#include "lens/store.h"

namespace lens {

struct ContainerEventSenderOptions {
  // gRPC target of lens-jobs: "host:50051", "unix:///path.sock".
  std::string target = "127.0.0.1:50051";
  std::string node;  // required
  // TLS: on when tls_ca_file is set (PEM of the CA that signed lens-jobs).
  std::string tls_ca_file;
  // Sent as "authorization: Bearer <token>" on the stream; empty = none.
  // With per-node tokens on the server (ContainerEventServerOptions::
  // node_tokens) this is this node's own token.
  std::string bearer_token;
  // A snapshot larger than this (serialized bytes) is sent in parts of at
  // most this size (SnapshotBegin, SnapshotPart..., SnapshotEnd); a smaller
  // one as a single Snapshot message, which older servers read too. A
  // container larger than this travels alone in its part. 4 KiB .. 3 MiB
  // (the server's message limit is 4 MiB); Start() checks.
  size_t snapshot_part_bytes = 1 << 20;
  // Unacked messages kept for resending. When full, the oldest event is
  // dropped and counted (the next snapshot repairs the state it carried).
  size_t max_buffered = 10000;
  std::chrono::milliseconds reconnect_min{100};
  std::chrono::milliseconds reconnect_max{10000};
};

// Counters of a sender. Plain value.
struct ContainerEventSenderStats {
  uint64_t published = 0;  // changes handed to Publish/PublishSnapshot
  uint64_t sent = 0;       // messages written (resends included)
  uint64_t acked = 0;      // highest sequence the server acked
  uint64_t dropped = 0;    // events dropped because the buffer was full
  uint64_t reconnects = 0;
  size_t buffered = 0;  // unacked messages held now
  bool connected = false;
};

// Thread-safe: Publish* from any thread; one internal thread owns the stream
// and is the only one that writes to it.
class ContainerEventSender {
 public:
  explicit ContainerEventSender(ContainerEventSenderOptions options);
  ~ContainerEventSender();  // Stop()s
  ContainerEventSender(const ContainerEventSender&) = delete;
  ContainerEventSender& operator=(const ContainerEventSender&) = delete;

  // Queues one change; never blocks on the network. Returns the message's
  // sequence number (acked once stats().acked reaches it).
  uint64_t Publish(const ContainerChange& change);
  // Queues a full snapshot; it supersedes any snapshot not yet sent.
  void PublishSnapshot(const std::vector<ContainerRecord>& containers);

  // Starts the connection thread (InvalidArgument without a node or target;
  // NotFound/InvalidArgument for an unreadable CA file). Connecting happens
  // in the background with backoff.
  Status Start();
  void Stop();  // idempotent
  // Waits until every published message is acked or the timeout passes;
  // true when nothing is left unacked.
  bool Flush(std::chrono::milliseconds timeout);
  ContainerEventSenderStats stats() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

struct ContainerEventServerOptions {
  // "0.0.0.0:50051"; port 0 picks a free port (see port()).
  std::string listen = "0.0.0.0:50051";
  // TLS when both are set (PEM files).
  std::string tls_cert_file;
  std::string tls_key_file;
  // Required "authorization: Bearer <token>" when set; streams without it
  // end with UNAUTHENTICATED. Shared by every node: a holder can speak for
  // any node name (see node_tokens).
  std::string bearer_token;
  // Per-node identity: node name -> that node's token. When not empty, a
  // stream authenticates with its node's token (UNAUTHENTICATED otherwise)
  // and may speak only for that node: a Hello or a message for another node
  // ends the stream with PERMISSION_DENIED (counted in
  // lens_container_event_permission_denied_total). Tokens must be unique.
  std::map<std::string, std::string> node_tokens;
  // With node_tokens set, whether the shared bearer_token is still accepted
  // on the stream (for any node, as before): a migration aid, off by default.
  bool accept_shared_token = false;
  // Largest accepted message.
  size_t max_message_bytes = 4 << 20;
  // Largest snapshot one stream may assemble from parts (the wire bytes of
  // its parts); a larger one ends the stream with RESOURCE_EXHAUSTED and
  // changes nothing.
  size_t max_snapshot_bytes = size_t{64} << 20;
  // Messages from all streams are written in batches of at most this many,
  // one transaction per table, before they are acked.
  size_t max_batch = 1000;
  // The queue in front of the store writer holds at most this many bytes
  // (wire bytes of the messages; a snapshot counts whole) and 4 * max_batch
  // messages. When full, the streams stop reading, so gRPC flow control
  // holds the agents back; nothing is dropped. One message larger than the
  // bound is admitted when the queue is empty.
  size_t max_queued_bytes = size_t{64} << 20;
  // Listener limits (docs/containers.md): at most max_streams streams at once
  // (one per node agent, each holding two threads; more get
  // RESOURCE_EXHAUSTED), 4 per connection; a
  // connection must finish its TLS/HTTP2 handshake within handshake_timeout;
  // request metadata is capped at 16 KiB; a connection without streams is
  // closed after 5 minutes; clients pinging more often than every 10 s
  // without data are disconnected (GOAWAY too_many_pings).
  int max_streams = 2048;
  std::chrono::milliseconds handshake_timeout{10000};
};

// Counters of a server. Plain value.
struct ContainerEventServerStats {
  uint64_t events_received = 0;  // events and snapshot entries
  uint64_t snapshots_received = 0;
  uint64_t errors = 0;             // store failures and bad messages
  uint64_t unauthenticated = 0;    // streams without a valid token
  uint64_t permission_denied = 0;  // a node speaking for another node
  int64_t queued_bytes = 0;        // waiting for the store writer now
  uint64_t batches = 0;
  double processing_seconds_sum = 0;  // receive -> stored, summed
  int64_t connected_agents = 0;
};

// Thread-safe. The store must outlive the server.
class ContainerEventServer {
 public:
  ContainerEventServer(ContainerEventServerOptions options, Store* store);
  ~ContainerEventServer();  // Stop()s
  ContainerEventServer(const ContainerEventServer&) = delete;
  ContainerEventServer& operator=(const ContainerEventServer&) = delete;

  // Binds and serves (Unavailable when the address cannot be bound,
  // InvalidArgument for unreadable TLS files).
  Status Start();
  // Cancels open streams and stops; idempotent.
  void Stop();
  int port() const;  // the bound port once started
  ContainerEventServerStats stats() const;
  // Prometheus text of the stats (lens_container_events_received_total,
  // lens_container_event_errors_total,
  // lens_container_event_processing_seconds, lens_container_event_agents,
  // lens_container_event_queued_bytes, ...; docs/containers.md).
  std::string RenderMetrics() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Reads a node tokens file for ContainerEventServerOptions::node_tokens: one
// "NODE TOKEN" pair per line (separated by spaces or tabs), blank lines and
// lines starting with '#' ignored. InvalidArgument naming `what`, the path
// and the line (never a token) for a malformed line, an invalid node name,
// a token under 16 bytes, a node listed twice or a token shared by two
// nodes; NotFound/PermissionDenied when unreadable; at most 4 MiB.
StatusOr<std::map<std::string, std::string>> ReadNodeTokensFile(
    const std::string& path, std::string_view what);

}  // namespace lens

#endif  // LENS_CONTAINER_EVENTS_CONTAINER_EVENTS_H_
