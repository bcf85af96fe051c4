// PodResourcesClient against a real gRPC server on a unix socket that serves
// v1.PodResourcesLister like a kubelet. The response data follows what the
// device plugins register: the ROCm k8s-device-plugin names amd.com/gpu
// devices by PCI address, the NVIDIA plugin nvidia.com/gpu by "GPU-<uuid>",
// and Mellanox's k8s-rdma-shared-dev-plugin rdma/hca_shared_devices_a by
// index ("0", "1", ...). The kubelet lists every pod, also those without
// devices, with cpu_ids when the static CPU manager policy is on.
#include "containers/pod_resources.h"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <grpcpp/server_context.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "k8s/podresources/v1/api.grpc.pb.h"

namespace lens::containers {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/lens-podres-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

void AddDevices(v1::ContainerResources* c, const std::string& resource,
                const std::vector<std::string>& ids, int64_t numa_node) {
  v1::ContainerDevices* d = c->add_devices();
  d->set_resource_name(resource);
  for (const std::string& id : ids) d->add_device_ids(id);
  d->mutable_topology()->add_nodes()->set_id(numa_node);
}

v1::ContainerResources* AddContainer(v1::PodResources* pod,
                                     const std::string& name,
                                     std::vector<int64_t> cpu_ids = {}) {
  v1::ContainerResources* c = pod->add_containers();
  c->set_name(name);
  for (int64_t cpu : cpu_ids) c->add_cpu_ids(cpu);
  return c;
}

v1::PodResources* AddPod(v1::ListPodResourcesResponse* r, const std::string& ns,
                         const std::string& name) {
  v1::PodResources* pod = r->add_pod_resources();
  pod->set_namespace_(ns);
  pod->set_name(name);
  return pod;
}

// An MI300X training node that also runs an NVIDIA test pod and the usual
// system pods.
v1::ListPodResourcesResponse GpuNodeResponse() {
  v1::ListPodResourcesResponse r;
  v1::PodResources* system = AddPod(&r, "kube-system", "kube-proxy-7xq9z");
  AddContainer(system, "kube-proxy", {2, 3});

  v1::PodResources* train =
      AddPod(&r, "ml-training", "llama3-70b-pretrain-worker-0");
  v1::ContainerResources* pytorch =
      AddContainer(train, "pytorch", {8, 9, 10, 11, 104, 105, 106, 107});
  AddDevices(pytorch, "amd.com/gpu",
             {"0000:11:00.0", "0000:2f:00.0", "0000:46:00.0", "0000:5d:00.0"},
             0);
  AddDevices(pytorch, "rdma/hca_shared_devices_a", {"0"}, 0);

  v1::PodResources* serve =
      AddPod(&r, "inference", "vllm-mi300x-6d9f7c5b8-x2k4p");
  AddDevices(AddContainer(serve, "vllm"), "amd.com/gpu", {"0000:8b:00.0"}, 1);
  AddContainer(serve, "istio-proxy");
  AddDevices(AddContainer(serve, "vllm-draft"), "amd.com/gpu", {"0000:aa:00.0"},
             1);

  v1::PodResources* cuda = AddPod(&r, "default", "cuda-vectoradd");
  AddDevices(AddContainer(cuda, "cuda-vectoradd"), "nvidia.com/gpu",
             {"GPU-5d2d1c4e-3f1a-8b7e-0c6d-9a4f2e1b7c3d"}, 0);

  // A resource entry without ids holds no device.
  v1::PodResources* odd = AddPod(&r, "monitoring", "node-exporter-4hd8w");
  AddContainer(odd, "node-exporter")
      ->add_devices()
      ->set_resource_name("amd.com/gpu");
  return r;
}

// Answers List with a fixed response, or holds the call until the client
// gives up (a kubelet stuck behind its own locks).
class FakeLister final : public v1::PodResourcesLister::Service {
 public:
  explicit FakeLister(v1::ListPodResourcesResponse response, bool hang = false)
      : response_(std::move(response)), hang_(hang) {}

  grpc::Status List(grpc::ServerContext* context,
                    const v1::ListPodResourcesRequest*,
                    v1::ListPodResourcesResponse* out) override {
    calls_.fetch_add(1);
    if (hang_) {
      while (!context->IsCancelled()) {
        std::this_thread::sleep_for(milliseconds(5));
      }
      return grpc::Status(grpc::StatusCode::CANCELLED, "client went away");
    }
    *out = response_;
    return grpc::Status::OK;
  }
  int calls() const { return calls_.load(); }

 private:
  const v1::ListPodResourcesResponse response_;
  const bool hang_;
  std::atomic<int> calls_{0};
};

// A gRPC server on `socket_path` serving `service` until destroyed.
class FakeKubelet {
 public:
  FakeKubelet(const std::string& socket_path, grpc::Service* service) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix:" + socket_path,
                             grpc::InsecureServerCredentials());
    builder.RegisterService(service);
    server_ = builder.BuildAndStart();
  }
  ~FakeKubelet() { Stop(); }
  bool running() const { return server_ != nullptr; }
  void Stop() {
    if (!server_) return;
    server_->Shutdown(std::chrono::system_clock::now() + milliseconds(500));
    server_->Wait();
    server_.reset();
  }

 private:
  std::unique_ptr<grpc::Server> server_;
};

// A socket file nobody listens on, as a killed kubelet leaves behind.
bool LeaveStaleSocket(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  path.copy(addr.sun_path, sizeof addr.sun_path - 1);
  const bool bound =
      ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return bound;
}

PodResourcesContainer Expect(std::string ns, std::string pod,
                             std::string container,
                             std::vector<PodResourceDevices> devices) {
  return PodResourcesContainer{std::move(ns), std::move(pod),
                               std::move(container), std::move(devices)};
}

TEST(PodResourcesClientTest, ListsContainersWithDevicesOnly) {
  TempDir dir;
  const std::string socket = dir.Sub("kubelet.sock");
  FakeLister lister(GpuNodeResponse());
  FakeKubelet kubelet(socket, &lister);
  ASSERT_TRUE(kubelet.running());

  PodResourcesClient client(socket, milliseconds(5000));
  StatusOr<std::vector<PodResourcesContainer>> got = client.List();
  ASSERT_TRUE(got.ok()) << got.status();
  const std::vector<PodResourcesContainer> want = {
      Expect(
          "ml-training", "llama3-70b-pretrain-worker-0", "pytorch",
          {{"amd.com/gpu",
            {"0000:11:00.0", "0000:2f:00.0", "0000:46:00.0", "0000:5d:00.0"}},
           {"rdma/hca_shared_devices_a", {"0"}}}),
      Expect("inference", "vllm-mi300x-6d9f7c5b8-x2k4p", "vllm",
             {{"amd.com/gpu", {"0000:8b:00.0"}}}),
      Expect("inference", "vllm-mi300x-6d9f7c5b8-x2k4p", "vllm-draft",
             {{"amd.com/gpu", {"0000:aa:00.0"}}}),
      Expect(
          "default", "cuda-vectoradd", "cuda-vectoradd",
          {{"nvidia.com/gpu", {"GPU-5d2d1c4e-3f1a-8b7e-0c6d-9a4f2e1b7c3d"}}}),
  };
  EXPECT_EQ(*got, want);
}

TEST(PodResourcesClientTest, ReusesTheConnectionAcrossCalls) {
  TempDir dir;
  const std::string socket = dir.Sub("kubelet.sock");
  FakeLister lister(GpuNodeResponse());
  FakeKubelet kubelet(socket, &lister);
  PodResourcesClient client(socket, milliseconds(5000));
  for (int i = 0; i < 3; ++i) {
    StatusOr<std::vector<PodResourcesContainer>> got = client.List();
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->size(), 4u);
  }
  EXPECT_EQ(lister.calls(), 3);
}

TEST(PodResourcesClientTest, EmptyNodeIsAnEmptyList) {
  TempDir dir;
  const std::string socket = dir.Sub("kubelet.sock");
  FakeLister lister{v1::ListPodResourcesResponse()};
  FakeKubelet kubelet(socket, &lister);
  PodResourcesClient client(socket, milliseconds(5000));
  StatusOr<std::vector<PodResourcesContainer>> got = client.List();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(got->empty());
}

TEST(PodResourcesClientTest, MissingSocketIsNotFound) {
  TempDir dir;
  const std::string socket = dir.Sub("pod-resources/kubelet.sock");
  PodResourcesClient client(socket, milliseconds(1000));
  StatusOr<std::vector<PodResourcesContainer>> got = client.List();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kNotFound);
  EXPECT_NE(got.status().message().find(socket), std::string::npos)
      << got.status();
}

TEST(PodResourcesClientTest, RegularFileIsNotASocket) {
  TempDir dir;
  const std::string path = dir.Sub("kubelet.sock");
  std::ofstream(path) << "not a socket";
  PodResourcesClient client(path, milliseconds(1000));
  StatusOr<std::vector<PodResourcesContainer>> got = client.List();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(got.status().message().find(path), std::string::npos);
}

// connect() is refused.
TEST(PodResourcesClientTest, StaleSocketIsUnavailable) {
  TempDir dir;
  const std::string path = dir.Sub("kubelet.sock");
  ASSERT_TRUE(LeaveStaleSocket(path));

  PodResourcesClient client(path, milliseconds(2000));
  const Clock::time_point start = Clock::now();
  StatusOr<std::vector<PodResourcesContainer>> got = client.List();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kUnavailable) << got.status();
  EXPECT_NE(got.status().message().find(path), std::string::npos);
  EXPECT_LT(Clock::now() - start, milliseconds(2000));
}

TEST(PodResourcesClientTest, SlowKubeletIsUnavailableAtTheDeadline) {
  TempDir dir;
  const std::string socket = dir.Sub("kubelet.sock");
  FakeLister lister(GpuNodeResponse(), /*hang=*/true);
  FakeKubelet kubelet(socket, &lister);
  PodResourcesClient client(socket, milliseconds(300));

  const Clock::time_point start = Clock::now();
  StatusOr<std::vector<PodResourcesContainer>> got = client.List();
  const Clock::duration took = Clock::now() - start;
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kUnavailable) << got.status();
  EXPECT_NE(got.status().message().find(socket), std::string::npos);
  EXPECT_NE(got.status().message().find("Deadline"), std::string::npos)
      << "the gRPC message is kept: " << got.status();
  EXPECT_EQ(lister.calls(), 1);
  EXPECT_GE(took, milliseconds(250));
  EXPECT_LT(took, milliseconds(2000));
}

// A server without List (the generated base service answers UNIMPLEMENTED,
// as a kubelet without the v1 API does).
TEST(PodResourcesClientTest, KubeletWithoutV1IsUnimplemented) {
  TempDir dir;
  const std::string socket = dir.Sub("kubelet.sock");
  v1::PodResourcesLister::Service bare;
  FakeKubelet kubelet(socket, &bare);
  PodResourcesClient client(socket, milliseconds(5000));
  StatusOr<std::vector<PodResourcesContainer>> got = client.List();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kUnimplemented) << got.status();
  EXPECT_NE(got.status().message().find(socket), std::string::npos);
}

// Killed, then restarted: the calls in between fail, and the first call
// after the restart succeeds (no waiting out gRPC's reconnect backoff).
TEST(PodResourcesClientTest, ReachesARestartedKubeletOnTheNextCall) {
  TempDir dir;
  const std::string socket = dir.Sub("kubelet.sock");
  PodResourcesClient client(socket, milliseconds(2000));
  {
    FakeLister lister(GpuNodeResponse());
    FakeKubelet kubelet(socket, &lister);
    ASSERT_TRUE(client.List().ok());
  }
  ASSERT_TRUE(LeaveStaleSocket(socket));
  for (int i = 0; i < 2; ++i) {
    StatusOr<std::vector<PodResourcesContainer>> gone = client.List();
    ASSERT_FALSE(gone.ok());
    EXPECT_EQ(gone.status().code(), StatusCode::kUnavailable) << gone.status();
  }

  v1::ListPodResourcesResponse after;
  AddDevices(AddContainer(AddPod(&after, "default", "cuda-vectoradd"),
                          "cuda-vectoradd"),
             "nvidia.com/gpu", {"GPU-5d2d1c4e-3f1a-8b7e-0c6d-9a4f2e1b7c3d"}, 0);
  FakeLister lister(after);
  FakeKubelet kubelet(socket, &lister);  // replaces the stale socket file
  ASSERT_TRUE(kubelet.running());
  const Clock::time_point start = Clock::now();
  StatusOr<std::vector<PodResourcesContainer>> back = client.List();
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->size(), 1u);
  EXPECT_LT(Clock::now() - start, milliseconds(1000));
}

// Many pods: more than gRPC's default 4 MiB receive limit is accepted, a
// response past the client's 16 MiB limit is refused with its own code.
// `pods` pods of about 2.5 KB each (long names: few messages for many bytes).
v1::ListPodResourcesResponse ManyPods(int pods) {
  v1::ListPodResourcesResponse r;
  const std::string pad(2400, 'x');
  for (int i = 0; i < pods; ++i) {
    v1::PodResources* pod =
        AddPod(&r, "batch", "job-" + std::to_string(i) + "-" + pad);
    AddDevices(AddContainer(pod, "worker"), "amd.com/gpu", {"0000:11:00.0"}, 0);
  }
  return r;
}

TEST(PodResourcesClientTest, ResponseSizeLimit) {
  TempDir dir;
  const std::string big_socket = dir.Sub("big.sock");
  v1::ListPodResourcesResponse six_mib = ManyPods(2500);
  ASSERT_GT(six_mib.ByteSizeLong(), size_t{4} << 20);
  FakeLister big(std::move(six_mib));
  FakeKubelet big_kubelet(big_socket, &big);
  StatusOr<std::vector<PodResourcesContainer>> got =
      PodResourcesClient(big_socket, milliseconds(10000)).List();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->size(), 2500u);

  const std::string huge_socket = dir.Sub("huge.sock");
  FakeLister huge(ManyPods(8000));  // about 19 MiB
  FakeKubelet huge_kubelet(huge_socket, &huge);
  got = PodResourcesClient(huge_socket, milliseconds(10000)).List();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kResourceExhausted)
      << got.status();
  EXPECT_NE(got.status().message().find(huge_socket), std::string::npos);
}

}  // namespace
}  // namespace lens::containers
