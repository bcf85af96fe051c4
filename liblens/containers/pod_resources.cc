// PodResourcesClient over gRPC: one channel to the kubelet's unix socket,
// List() with a deadline, the response reduced to containers with devices.
#include "containers/pod_resources.h"

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>
#include <grpcpp/support/status.h>
#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <system_error>
#include <utility>

#include "k8s/podresources/v1/api.grpc.pb.h"

namespace lens::containers {
namespace {

// 16 MiB, as pod-resources clients commonly allow (gRPC's default is 4 MiB);
// a node with hundreds of pods answers in well under that.
constexpr int kMaxReceiveBytes = 16 << 20;

std::string Target(const std::string& socket_path) {
  std::error_code ec;
  std::filesystem::path path = std::filesystem::absolute(socket_path, ec);
  if (ec) path = socket_path;
  return "unix://" + path.string();
}

// "Nothing to report" (no socket: not a Kubernetes node, or the kubelet is
// not up yet) is NotFound; a path that is not a socket is a setup error.
Status CheckPodResourcesSocket(const std::string& socket_path) {
  struct stat st {};
  if (::stat(socket_path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) {
      return NotFoundError("kubelet pod-resources socket " + socket_path +
                           " does not exist");
    }
    return ErrnoError(err, "stat kubelet pod-resources socket " + socket_path);
  }
  if (!S_ISSOCK(st.st_mode)) {
    return FailedPreconditionError("kubelet pod-resources socket " +
                                   socket_path + " is not a unix socket");
  }
  return OkStatus();
}

Status FromGrpc(const grpc::Status& status, const std::string& socket_path) {
  const std::string where = "kubelet pod-resources List at " + socket_path;
  const std::string detail =
      status.error_message().empty() ? "" : ": " + status.error_message();
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED: {
      const std::string what =
          status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED
              ? "no answer before the deadline"
              : "unavailable";
      return UnavailableError(where + ": " + what + detail);
    }
    case grpc::StatusCode::UNIMPLEMENTED:
      return UnimplementedError(where + ": the kubelet does not serve v1" +
                                detail);
    default:
      // The canonical codes are numerically equal.
      return Status(static_cast<StatusCode>(status.error_code()),
                    where + detail);
  }
}

// Containers that hold at least one device-plugin device; CPU and memory
// assignments (cpu_ids, memory) are not devices and are dropped.
std::vector<PodResourcesContainer> Containers(
    const v1::ListPodResourcesResponse& response) {
  std::vector<PodResourcesContainer> out;
  for (const v1::PodResources& pod : response.pod_resources()) {
    for (const v1::ContainerResources& c : pod.containers()) {
      PodResourcesContainer container;
      container.pod_namespace = pod.namespace_();
      container.pod_name = pod.name();
      container.container_name = c.name();
      for (const v1::ContainerDevices& d : c.devices()) {
        if (d.device_ids().empty()) continue;
        container.devices.push_back(PodResourceDevices{
            d.resource_name(), std::vector<std::string>(d.device_ids().begin(),
                                                        d.device_ids().end())});
      }
      if (!container.devices.empty()) out.push_back(std::move(container));
    }
  }
  return out;
}

}  // namespace

class PodResourcesClient::Impl {
 public:
  Impl(std::string socket_path, std::chrono::milliseconds timeout)
      : socket_path_(std::move(socket_path)), timeout_(timeout) {}

  StatusOr<std::vector<PodResourcesContainer>> List() {
    if (Status st = CheckPodResourcesSocket(socket_path_); !st.ok()) {
      stub_.reset();  // the kubelet went away; dial afresh when it is back
      return st;
    }
    if (!stub_) Connect();
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + timeout_);
    v1::ListPodResourcesResponse response;
    const grpc::Status status =
        stub_->List(&context, v1::ListPodResourcesRequest(), &response);
    if (!status.ok()) {
      // A fresh channel next time: a restarted kubelet is then reached on
      // the next call instead of after gRPC's reconnect backoff (up to 2 min).
      stub_.reset();
      return FromGrpc(status, socket_path_);
    }
    return Containers(response);
  }

 private:
  void Connect() {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(kMaxReceiveBytes);
    stub_ = v1::PodResourcesLister::NewStub(grpc::CreateCustomChannel(
        Target(socket_path_), grpc::InsecureChannelCredentials(), args));
  }

  const std::string socket_path_;
  const std::chrono::milliseconds timeout_;
  std::unique_ptr<v1::PodResourcesLister::Stub> stub_;  // null until used
};

PodResourcesClient::PodResourcesClient(std::string socket_path,
                                       std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>(std::move(socket_path), timeout)) {}

PodResourcesClient::~PodResourcesClient() = default;

StatusOr<std::vector<PodResourcesContainer>> PodResourcesClient::List() {
  return impl_->List();
}

}  // namespace lens::containers
