// A hand-driven agent for server tests: one real gRPC stream to a
// ContainerEventServer, with the messages written out explicitly so tests
// can also send what a well-behaved sender never would.
#ifndef LENS_TEST_CONTAINER_EVENTS_TEST_AGENT_H_
#define LENS_TEST_CONTAINER_EVENTS_TEST_AGENT_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "container_events/convert.h"
#include "lens/containers.h"
#include "lens/v1/container_events.grpc.pb.h"

namespace lens::test {

inline constexpr int64_t kBaseUs = 1714550000000000;  // 2024-05-01

inline Timestamp Us(int64_t offset) {
  return container_events::FromUnixMicros(kBaseUs + offset);
}

inline ContainerRecord MakeContainer(const std::string& id,
                                     const std::string& node,
                                     const std::string& state = "running") {
  ContainerRecord c;
  c.container_id = id;
  c.node = node;
  c.runtime_namespace = "k8s.io";
  c.pod_uid = "uid-" + id;
  c.pod_name = "pod-" + id;
  c.pod_namespace = "ml";
  c.container_name = "main";
  c.image = "registry.local/train:1";
  c.state = ParseContainerState(state);
  c.pid = 100;
  c.created_at = Us(0);
  c.started_at = Us(1000);
  c.updated_at = Us(2000);
  c.devices = {
      {DeviceKind::kGpu, "GPU-" + id, "0000:1b:00.0", "pod-resources"}};
  return c;
}

inline ContainerChange MakeChange(const ContainerRecord& c,
                                  const std::string& type, int64_t at_offset) {
  ContainerChange change;
  change.container = c;
  change.event.container_id = c.container_id;
  change.event.node = c.node;
  change.event.event_type = ParseContainerEventType(type);
  change.event.at = Us(at_offset);
  return change;
}

class TestAgent {
 public:
  TestAgent(const std::shared_ptr<grpc::Channel>& channel, std::string node,
            const std::string& token = "")
      : node_(std::move(node)), stub_(v1::ContainerEvents::NewStub(channel)) {
    if (!token.empty()) ctx_.AddMetadata("authorization", "Bearer " + token);
    ctx_.set_deadline(std::chrono::system_clock::now() +
                      std::chrono::seconds(60));
    stream_ = stub_->Stream(&ctx_);
  }

  bool Send(const v1::AgentMessage& m) { return stream_->Write(m); }
  // Ends the call from the agent's side, as a broken connection would.
  void Cancel() { ctx_.TryCancel(); }
  bool Hello() {
    v1::AgentMessage m;
    m.set_node(node_);
    m.mutable_hello()->set_node(node_);
    m.mutable_hello()->set_session(7);
    m.mutable_hello()->set_agent_version("test");
    return Send(m);
  }
  bool Event(uint64_t sequence, const ContainerChange& change) {
    v1::AgentMessage m;
    m.set_node(node_);
    m.set_sequence(sequence);
    container_events::ToProto(change, m.mutable_event());
    return Send(m);
  }
  bool Snapshot(uint64_t sequence, const std::vector<ContainerRecord>& all,
                int64_t at_offset) {
    v1::AgentMessage m;
    m.set_node(node_);
    m.set_sequence(sequence);
    m.mutable_snapshot()->set_at_us(kBaseUs + at_offset);
    for (const ContainerRecord& c : all) {
      container_events::ToProto(c, m.mutable_snapshot()->add_containers());
    }
    return Send(m);
  }

  // The three messages of a snapshot in parts (protocol 2).
  bool Begin(uint64_t sequence, uint64_t containers, int64_t at_offset) {
    v1::AgentMessage m = Numbered(sequence);
    m.mutable_snapshot_begin()->set_at_us(kBaseUs + at_offset);
    m.mutable_snapshot_begin()->set_containers(containers);
    return Send(m);
  }
  bool Part(uint64_t sequence, uint32_t index,
            const std::vector<ContainerRecord>& containers) {
    v1::AgentMessage m = Numbered(sequence);
    m.mutable_snapshot_part()->set_index(index);
    for (const ContainerRecord& c : containers) {
      container_events::ToProto(c, m.mutable_snapshot_part()->add_containers());
    }
    return Send(m);
  }
  bool End(uint64_t sequence, uint32_t parts) {
    v1::AgentMessage m = Numbered(sequence);
    m.mutable_snapshot_end()->set_parts(parts);
    return Send(m);
  }

  // Reads acks until one covers `sequence`; false when the stream ended
  // first. Every ack read is kept in acks().
  bool WaitAck(uint64_t sequence) {
    v1::ServerMessage m;
    while (stream_->Read(&m)) {
      acks_.push_back(m.ack().sequence());
      if (m.ack().sequence() >= sequence) return true;
    }
    return false;
  }
  // Closes the agent's side, reads what is left, returns the final status.
  grpc::Status Close() {
    stream_->WritesDone();
    return Drain();
  }
  // Reads until the server ends the stream; returns its final status.
  grpc::Status Drain() {
    v1::ServerMessage m;
    while (stream_->Read(&m)) acks_.push_back(m.ack().sequence());
    return stream_->Finish();
  }
  const std::vector<uint64_t>& acks() const { return acks_; }

 private:
  v1::AgentMessage Numbered(uint64_t sequence) const {
    v1::AgentMessage m;
    m.set_node(node_);
    m.set_sequence(sequence);
    return m;
  }

  std::string node_;
  std::unique_ptr<v1::ContainerEvents::Stub> stub_;
  grpc::ClientContext ctx_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::AgentMessage, v1::ServerMessage>>
      stream_;
  std::vector<uint64_t> acks_;
};

}  // namespace lens::test

#endif  // LENS_TEST_CONTAINER_EVENTS_TEST_AGENT_H_
