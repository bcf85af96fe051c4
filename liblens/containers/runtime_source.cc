// The runtime choice and the containerd adapter of RuntimeSource.
#include "containers/runtime_source.h"

#include <sys/stat.h>

#include <utility>

#include "containers/docker/docker_client.h"

namespace lens {

std::string_view ToString(ContainerRuntime runtime) {
  switch (runtime) {
    case ContainerRuntime::kContainerd:
      return "containerd";
    case ContainerRuntime::kDocker:
      return "docker";
    case ContainerRuntime::kAuto:
      return "auto";
  }
  return "auto";
}

StatusOr<ContainerRuntime> ParseContainerRuntime(std::string_view text) {
  for (ContainerRuntime r :
       {ContainerRuntime::kContainerd, ContainerRuntime::kDocker,
        ContainerRuntime::kAuto}) {
    if (text == ToString(r)) return r;
  }
  return InvalidArgumentError("container runtime '" + std::string(text) +
                              "': use containerd, docker or auto");
}

namespace {

bool Exists(const std::string& path) {
  struct stat st;
  return !path.empty() && ::stat(path.c_str(), &st) == 0;
}

// Where cri-dockerd (Kubernetes' Docker shim since 1.24) listens by default.
constexpr char kCriDockerdSocket[] = "/run/cri-dockerd.sock";

}  // namespace

ContainerRuntime ResolveContainerRuntime(
    const ContainerTrackerOptions& options) {
  if (options.runtime != ContainerRuntime::kAuto) return options.runtime;
  const bool containerd = Exists(options.containerd_socket);
  const bool docker = Exists(options.docker_socket);
  if (docker && !containerd) return ContainerRuntime::kDocker;
  // Docker Engine runs on containerd (its containers in namespace "moby"),
  // so both sockets exist on every Docker host: only cri-dockerd says the
  // kubelet's pods are Docker's.
  if (docker && containerd && Exists(kCriDockerdSocket)) {
    return ContainerRuntime::kDocker;
  }
  return ContainerRuntime::kContainerd;
}

namespace containers {
namespace {

class ContainerdSource final : public RuntimeSource {
 public:
  explicit ContainerdSource(const ContainerTrackerOptions& o)
      : client_(o.containerd_socket, o.containerd_namespace, o.call_timeout),
        namespace_(o.containerd_namespace) {}

  StatusOr<std::vector<RuntimeContainer>> List() override {
    return client_.List();
  }
  StatusOr<RuntimeContainer> Get(const std::string& id) override {
    return client_.Get(id);
  }
  StatusOr<std::unique_ptr<RuntimeEventStream>> Subscribe() override {
    return client_.Subscribe();
  }
  std::string Describe() const override {
    return "containerd at " + client_.socket_path() + " (namespace " +
           namespace_ + ")";
  }

 private:
  ContainerdClient client_;
  std::string namespace_;
};

}  // namespace

ContainerTrackerOptions ForRuntime(ContainerTrackerOptions options) {
  options.runtime = ResolveContainerRuntime(options);
  if (options.runtime == ContainerRuntime::kDocker) {
    options.containerd_namespace = kDockerNamespace;
  }
  return options;
}

std::unique_ptr<RuntimeSource> NewRuntimeSource(
    const ContainerTrackerOptions& options) {
  if (ResolveContainerRuntime(options) == ContainerRuntime::kDocker) {
    return std::make_unique<docker::DockerClient>(
        options.docker_socket, options.roots, options.call_timeout);
  }
  return std::make_unique<ContainerdSource>(options);
}

}  // namespace containers
}  // namespace lens
