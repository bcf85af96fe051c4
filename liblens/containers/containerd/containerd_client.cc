#include "containers/containerd/containerd_client.h"

#include <grpcpp/grpcpp.h>
#include <sys/stat.h>

#include <algorithm>
#include <utility>

#include "github.com/containerd/containerd/api/events/container.pb.h"
#include "github.com/containerd/containerd/api/events/task.pb.h"
#include "github.com/containerd/containerd/api/services/containers/v1/containers.grpc.pb.h"
#include "github.com/containerd/containerd/api/services/events/v1/events.grpc.pb.h"
#include "github.com/containerd/containerd/api/services/tasks/v1/tasks.grpc.pb.h"
#include "proto/grpc_status.h"

namespace lens::containers {
namespace {

namespace cs = ::containerd::services::containers::v1;
namespace ts = ::containerd::services::tasks::v1;
namespace es = ::containerd::services::events::v1;
namespace ev = ::containerd::events;
namespace tt = ::containerd::v1::types;

// containerd's specs and label sets are small; a generous cap still bounds
// a hostile or broken peer.
constexpr int kMaxMessageBytes = 64 << 20;

Timestamp FromProtoTime(const google::protobuf::Timestamp& t) {
  return Timestamp(
      std::chrono::microseconds(t.seconds() * 1000000 + t.nanos() / 1000));
}

std::string TaskStatusName(tt::Status status) {
  switch (status) {
    case tt::CREATED:
      return "created";
    case tt::RUNNING:
      return "running";
    case tt::STOPPED:
      return "stopped";
    case tt::PAUSED:
      return "paused";
    case tt::PAUSING:
      return "pausing";
    default:
      return "unknown";
  }
}

RuntimeContainer FromProto(const cs::Container& c) {
  RuntimeContainer out;
  out.id = c.id();
  out.image = c.image();
  out.labels.insert(c.labels().begin(), c.labels().end());
  out.spec_json = c.spec().value();
  out.created_at = FromProtoTime(c.created_at());
  out.updated_at = FromProtoTime(c.updated_at());
  return out;
}

void ApplyTask(const tt::Process& task, RuntimeContainer* c) {
  c->has_task = true;
  c->task_status = TaskStatusName(task.status());
  c->pid = task.pid();
  if (task.status() == tt::STOPPED) {
    c->exit_status = static_cast<int32_t>(task.exit_status());
    if (task.has_exited_at()) c->exited_at = FromProtoTime(task.exited_at());
  }
}

// Decodes the payload of one envelope by its topic. Payloads are parsed from
// the Any's bytes directly: the type URLs containerd writes
// ("containerd.events.TaskStart") are not the "type.googleapis.com/..." form
// Any::UnpackTo expects.
// Fills `out` from one of containerd's event messages: container events
// carry the container's `id`, task events its `container_id` and a pid,
// exits and deletes the status (and `id`, the process: an exec'd process's
// exit is not the container's).
template <typename M>
bool Fill(const std::string& bytes, RuntimeEvent* out) {
  M m;
  if (!m.ParseFromString(bytes)) return false;
  if constexpr (requires { m.container_id(); }) {
    out->container_id = m.container_id();
  } else {
    out->container_id = m.id();
  }
  if constexpr (requires { m.pid(); }) out->pid = m.pid();
  if constexpr (requires { m.exit_status(); }) {
    out->exec = !m.id().empty() && m.id() != m.container_id();
    out->exit_status = static_cast<int32_t>(m.exit_status());
    out->exited_at = FromProtoTime(m.exited_at());
  }
  return true;
}

bool Decode(const es::Envelope& env, RuntimeEvent* out) {
  using Filler = bool (*)(const std::string&, RuntimeEvent*);
  static constexpr struct {
    std::string_view topic;
    RuntimeTopic decoded;
    Filler fill;
  } kTopics[] = {
      {"/containers/create", RuntimeTopic::kContainerCreate,
       Fill<ev::ContainerCreate>},
      {"/containers/update", RuntimeTopic::kContainerUpdate,
       Fill<ev::ContainerUpdate>},
      {"/containers/delete", RuntimeTopic::kContainerDelete,
       Fill<ev::ContainerDelete>},
      {"/tasks/create", RuntimeTopic::kTaskCreate, Fill<ev::TaskCreate>},
      {"/tasks/start", RuntimeTopic::kTaskStart, Fill<ev::TaskStart>},
      {"/tasks/exit", RuntimeTopic::kTaskExit, Fill<ev::TaskExit>},
      {"/tasks/delete", RuntimeTopic::kTaskDelete, Fill<ev::TaskDelete>},
      {"/tasks/oom", RuntimeTopic::kTaskOom, Fill<ev::TaskOOM>},
      {"/tasks/paused", RuntimeTopic::kTaskPaused, Fill<ev::TaskPaused>},
      {"/tasks/resumed", RuntimeTopic::kTaskResumed, Fill<ev::TaskResumed>},
  };
  const auto known =
      std::find_if(std::begin(kTopics), std::end(kTopics),
                   [&](const auto& t) { return t.topic == env.topic(); });
  if (known == std::end(kTopics))
    return false;  // images, snapshots, exec-added, ...: not ours
  out->topic = known->decoded;
  out->at = FromProtoTime(env.timestamp());
  if (!known->fill(env.event().value(), out)) return false;
  return !out->container_id.empty();
}

class GrpcEventStream final : public RuntimeEventStream {
 public:
  GrpcEventStream(std::unique_ptr<grpc::ClientContext> context,
                  std::unique_ptr<grpc::ClientReader<es::Envelope>> reader,
                  std::string namespace_name, std::string socket)
      : context_(std::move(context)),
        reader_(std::move(reader)),
        namespace_(std::move(namespace_name)),
        socket_(std::move(socket)) {}
  ~GrpcEventStream() override {
    Cancel();
    (void)Finish();
  }

  bool Next(RuntimeEvent* event) override {
    es::Envelope env;
    while (reader_->Read(&env)) {
      if (env.namespace_() != namespace_) continue;
      *event = RuntimeEvent{};
      if (Decode(env, event)) return true;
    }
    return false;
  }
  void Cancel() override { context_->TryCancel(); }
  Status Finish() override {
    if (!finished_) {
      finished_ = true;
      status_ = reader_->Finish();
    }
    return FromGrpcStatus(status_, "containerd events on " + socket_);
  }

 private:
  std::unique_ptr<grpc::ClientContext> context_;
  std::unique_ptr<grpc::ClientReader<es::Envelope>> reader_;
  std::string namespace_;
  std::string socket_;
  bool finished_ = false;
  grpc::Status status_;
};

}  // namespace

class ContainerdClient::Impl {
 public:
  Impl(const std::string& socket, std::string ns,
       std::chrono::milliseconds timeout)
      : namespace_(std::move(ns)), timeout_(timeout) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(kMaxMessageBytes);
    channel_ = grpc::CreateCustomChannel(
        "unix://" + socket, grpc::InsecureChannelCredentials(), args);
    containers_ = cs::Containers::NewStub(channel_);
    tasks_ = ts::Tasks::NewStub(channel_);
    events_ = es::Events::NewStub(channel_);
  }

  std::unique_ptr<grpc::ClientContext> Context(bool deadline) const {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->AddMetadata("containerd-namespace", namespace_);
    if (deadline)
      ctx->set_deadline(std::chrono::system_clock::now() + timeout_);
    return ctx;
  }

  std::string namespace_;
  std::chrono::milliseconds timeout_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<cs::Containers::Stub> containers_;
  std::unique_ptr<ts::Tasks::Stub> tasks_;
  std::unique_ptr<es::Events::Stub> events_;
};

ContainerdClient::ContainerdClient(std::string socket_path,
                                   std::string runtime_namespace,
                                   std::chrono::milliseconds timeout)
    : socket_path_(std::move(socket_path)),
      impl_(std::make_unique<Impl>(socket_path_, std::move(runtime_namespace),
                                   timeout)) {}

ContainerdClient::~ContainerdClient() = default;

namespace {
Status CheckContainerdSocket(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return NotFoundError("containerd socket " + path +
                         " does not exist (is containerd running? set "
                         "--containerd-socket)");
  }
  return OkStatus();
}
}  // namespace

StatusOr<std::vector<RuntimeContainer>> ContainerdClient::List() {
  LENS_RETURN_IF_ERROR(CheckContainerdSocket(socket_path_));
  cs::ListContainersResponse containers;
  auto ctx = impl_->Context(true);
  LENS_RETURN_IF_ERROR(
      FromGrpcStatus(impl_->containers_->List(ctx.get(), {}, &containers),
                     "list containers on " + socket_path_));
  ts::ListTasksResponse tasks;
  ctx = impl_->Context(true);
  LENS_RETURN_IF_ERROR(
      FromGrpcStatus(impl_->tasks_->List(ctx.get(), {}, &tasks),
                     "list tasks on " + socket_path_));
  std::map<std::string, const tt::Process*> by_id;
  // containerd fills Process.id (the init process's id is the container's)
  // and leaves container_id empty in task lists.
  for (const tt::Process& t : tasks.tasks()) {
    by_id[t.container_id().empty() ? t.id() : t.container_id()] = &t;
  }
  std::vector<RuntimeContainer> out;
  out.reserve(containers.containers_size());
  for (const cs::Container& c : containers.containers()) {
    out.push_back(FromProto(c));
    auto it = by_id.find(c.id());
    if (it != by_id.end()) ApplyTask(*it->second, &out.back());
  }
  return out;
}

StatusOr<RuntimeContainer> ContainerdClient::Get(const std::string& id) {
  LENS_RETURN_IF_ERROR(CheckContainerdSocket(socket_path_));
  cs::GetContainerRequest req;
  req.set_id(id);
  cs::GetContainerResponse resp;
  auto ctx = impl_->Context(true);
  LENS_RETURN_IF_ERROR(
      FromGrpcStatus(impl_->containers_->Get(ctx.get(), req, &resp),
                     "get container " + id + " on " + socket_path_));
  RuntimeContainer out = FromProto(resp.container());
  ts::GetRequest treq;
  treq.set_container_id(id);
  ts::GetResponse tresp;
  ctx = impl_->Context(true);
  grpc::Status st = impl_->tasks_->Get(ctx.get(), treq, &tresp);
  if (st.ok()) {
    ApplyTask(tresp.process(), &out);
  } else if (st.error_code() != grpc::StatusCode::NOT_FOUND) {
    return FromGrpcStatus(st, "get task " + id + " on " + socket_path_);
  }
  return out;
}

StatusOr<std::unique_ptr<RuntimeEventStream>> ContainerdClient::Subscribe() {
  LENS_RETURN_IF_ERROR(CheckContainerdSocket(socket_path_));
  // Fail fast (and with a clear message) when nothing listens.
  if (!impl_->channel_->WaitForConnected(std::chrono::system_clock::now() +
                                         impl_->timeout_)) {
    return UnavailableError("containerd at " + socket_path_ +
                            " does not answer");
  }
  es::SubscribeRequest req;
  req.add_filters("namespace==" + impl_->namespace_ + ",topic~=\"^/tasks/\"");
  req.add_filters("namespace==" + impl_->namespace_ +
                  ",topic~=\"^/containers/\"");
  auto ctx = impl_->Context(false);
  auto reader = impl_->events_->Subscribe(ctx.get(), req);
  return std::unique_ptr<RuntimeEventStream>(std::make_unique<GrpcEventStream>(
      std::move(ctx), std::move(reader), impl_->namespace_, socket_path_));
}

}  // namespace lens::containers
