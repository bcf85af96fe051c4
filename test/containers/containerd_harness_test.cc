// The containerd test harness against a real containerd 1.6 + runc: skipped
// (with the reason) when not root or the binaries are missing.
#include "containerd_harness.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace lens::test {
namespace {

namespace fs = std::filesystem;

constexpr char kImage[] = "docker.io/lens/busybox:test";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// JSON as `ctr containers info` prints it, without whitespace.
std::string Compact(std::string text) {
  text.erase(std::remove_if(text.begin(), text.end(), ::isspace), text.end());
  return text;
}

// Live (non-zombie) processes whose command line contains `needle`.
std::vector<std::string> ProcessesMentioning(const std::string& needle) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    std::string cmdline = ReadFile(e.path().string() + "/cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(needle) != std::string::npos) found.push_back(cmdline);
  }
  return found;
}

class ContainerdHarnessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto started = ContainerdServer::Start();
    if (started.status().code() == StatusCode::kFailedPrecondition) {
      GTEST_SKIP() << started.status().message();
    }
    ASSERT_TRUE(started.ok()) << started.status();
    server_ = std::move(started).value();
    Status imported = server_->ImportBusyboxImage(kCriNamespace, kImage);
    ASSERT_TRUE(imported.ok()) << imported;
  }

  ContainerSpec Spec(const std::string& id) {
    ContainerSpec spec;
    spec.id = id;
    spec.image = kImage;
    return spec;
  }

  // The STATUS column of `ctr tasks ls` for `id`, or "" when not listed.
  std::string TaskStatus(const std::string& id) {
    auto tasks = server_->Ctr({"-n", kCriNamespace, "tasks", "ls"});
    EXPECT_TRUE(tasks.ok()) << tasks.status();
    std::stringstream lines(tasks.ok() ? *tasks : "");
    for (std::string line; std::getline(lines, line);) {
      std::stringstream fields(line);
      std::string task, pid, status;
      fields >> task >> pid >> status;
      if (task == id) return status;
    }
    return "";
  }

  std::string Info(const std::string& id) {
    auto info = server_->Ctr({"-n", kCriNamespace, "containers", "info", id});
    EXPECT_TRUE(info.ok()) << info.status();
    return Compact(info.ok() ? *info : "");
  }

  std::unique_ptr<ContainerdServer> server_;
};

TEST_F(ContainerdHarnessTest, AnswersOnItsOwnSocketWithTheImage) {
  auto version = server_->Ctr({"version"});
  ASSERT_TRUE(version.ok()) << version.status();
  EXPECT_NE(version->find("Server:"), std::string::npos) << *version;
  EXPECT_EQ(server_->socket_path().rfind(server_->dir() + "/", 0), 0u);
  EXPECT_LT(server_->socket_path().size(), 108u);
  EXPECT_TRUE(server_->snapshotter() == "overlayfs" ||
              server_->snapshotter() == "native")
      << server_->snapshotter();
  auto images = server_->Ctr({"-n", kCriNamespace, "images", "ls", "-q"});
  ASSERT_TRUE(images.ok()) << images.status();
  EXPECT_EQ(*images, std::string(kImage) + "\n");
  EXPECT_EQ(server_->ImportBusyboxImage(kCriNamespace, "bad ref").code(),
            StatusCode::kInvalidArgument);
}

TEST_F(ContainerdHarnessTest, RunsLabeledContainerWithDevices) {
  const std::string render = server_->dir() + "/dev/dri/renderD128";
  const std::string uverbs = server_->dir() + "/dev/infiniband/uverbs0";
  ASSERT_TRUE(MakeCharDevice(render, 226, 128).ok());
  ASSERT_TRUE(MakeCharDevice(uverbs, 231, 192).ok());
  ASSERT_TRUE(MakeCharDevice(render, 226, 128).ok());  // idempotent
  EXPECT_FALSE(MakeCharDevice(render, 226, 129).ok());
  ContainerSpec spec = Spec("harness-labeled");
  spec.labels = {{"io.kubernetes.pod.name", "trainer-0"},
                 {"io.kubernetes.pod.namespace", "ml"},
                 {"io.kubernetes.pod.uid", "0f1e2d3c-uid"},
                 {"io.kubernetes.container.name", "worker"}};
  spec.devices = {render, uverbs};
  Status run = server_->RunDetached(spec);
  ASSERT_TRUE(run.ok()) << run;
  EXPECT_EQ(TaskStatus(spec.id), "RUNNING");

  const std::string info = Info(spec.id);
  for (const auto& [key, value] : spec.labels) {
    EXPECT_NE(info.find("\"" + key + "\":\"" + value + "\""), std::string::npos)
        << key << " in " << info;
  }
  EXPECT_NE(info.find(R"({"path":")" + render +
                      R"(","type":"c","major":226,"minor":128,)"),
            std::string::npos)
      << info;
  EXPECT_NE(info.find(R"({"path":")" + uverbs +
                      R"(","type":"c","major":231,"minor":192,)"),
            std::string::npos)
      << info;
  EXPECT_NE(info.find(R"({"allow":false,"access":"rwm"})"), std::string::npos);
  EXPECT_NE(info.find(R"({"allow":true,"type":"c","major":226,"minor":128,)"
                      R"("access":"rwm"})"),
            std::string::npos);

  // runc created the node at the host path inside the container.
  auto ls = server_->Exec(spec.id, {"ls", "-l", render});
  ASSERT_TRUE(ls.ok()) << ls.status();
  EXPECT_NE(ls->find("226, 128"), std::string::npos) << *ls;
  EXPECT_TRUE(fs::exists("/sys/fs/cgroup/memory" + server_->cgroup_parent() +
                         "/k8s.io/" + spec.id) ||
              !fs::exists("/sys/fs/cgroup/memory"));
}

TEST_F(ContainerdHarnessTest, PrivilegedContainerAllowsAllDevices) {
  ContainerSpec spec = Spec("harness-privileged");
  spec.privileged = true;
  spec.create_only = true;
  Status created = server_->RunDetached(spec);
  ASSERT_TRUE(created.ok()) << created;
  EXPECT_EQ(TaskStatus(spec.id), "");
  const std::string info = Info(spec.id);
  EXPECT_NE(
      info.find(R"("resources":{"devices":[{"allow":true,"access":"rwm"}])"),
      std::string::npos)
      << info;
  EXPECT_NE(info.find(R"({"path":"/dev/null","type":"c","major":1,"minor":3,)"),
            std::string::npos);
  Status started = server_->StartTask(spec.id);
  ASSERT_TRUE(started.ok()) << started;
  EXPECT_EQ(TaskStatus(spec.id), "RUNNING");
}

TEST_F(ContainerdHarnessTest, KillsAndDeletesTaskAndContainer) {
  const ContainerSpec spec = Spec("harness-killed");
  ASSERT_TRUE(server_->RunDetached(spec).ok());
  ASSERT_EQ(TaskStatus(spec.id), "RUNNING");
  EXPECT_EQ(server_->RunDetached(spec).code(), StatusCode::kAlreadyExists);
  Status killed = server_->KillTask(spec.id, SIGKILL);
  ASSERT_TRUE(killed.ok()) << killed;
  Status deleted = server_->DeleteTask(spec.id);
  ASSERT_TRUE(deleted.ok()) << deleted;
  EXPECT_EQ(TaskStatus(spec.id), "");
  deleted = server_->DeleteContainer(spec.id);
  ASSERT_TRUE(deleted.ok()) << deleted;
  auto containers =
      server_->Ctr({"-n", kCriNamespace, "containers", "ls", "-q"});
  ASSERT_TRUE(containers.ok()) << containers.status();
  EXPECT_EQ(*containers, "");
  EXPECT_EQ(server_->DeleteContainer(spec.id).code(), StatusCode::kNotFound);
}

TEST_F(ContainerdHarnessTest, RestartKeepsContainersAndRunningTasks) {
  const ContainerSpec running = Spec("harness-survivor");
  ContainerSpec created = Spec("harness-created-only");
  created.create_only = true;
  ASSERT_TRUE(server_->RunDetached(running).ok());
  ASSERT_TRUE(server_->RunDetached(created).ok());
  const std::string socket = server_->socket_path();
  const pid_t old_pid = server_->pid();

  ASSERT_TRUE(server_->Kill(SIGKILL).ok());
  EXPECT_EQ(server_->pid(), -1);
  EXPECT_FALSE(server_->Ctr({"version"}).ok());
  Status again = server_->StartAgain();
  ASSERT_TRUE(again.ok()) << again;
  EXPECT_NE(server_->pid(), old_pid);
  EXPECT_EQ(server_->socket_path(), socket);

  auto containers =
      server_->Ctr({"-n", kCriNamespace, "containers", "ls", "-q"});
  ASSERT_TRUE(containers.ok()) << containers.status();
  EXPECT_EQ(*containers, created.id + "\n" + running.id + "\n");
  EXPECT_EQ(TaskStatus(running.id), "RUNNING");  // the shim reconnected
  auto ls = server_->Exec(running.id, {"echo", "alive"});
  ASSERT_TRUE(ls.ok()) << ls.status();
  EXPECT_EQ(*ls, "alive\n");
}

TEST_F(ContainerdHarnessTest, MemoryLimitTriggersOomKill) {
  ContainerSpec spec = Spec("harness-oom");
  spec.memory_limit_bytes = 16 << 20;
  spec.args = {"sh", "-c", "dd if=/dev/zero bs=64M count=1 | cat; sleep 60"};
  ASSERT_TRUE(server_->RunDetached(spec).ok());
  // cgroup v1 counts OOM kills in memory.oom_control, v2 in memory.events.
  const std::string cgroup = server_->cgroup_parent() + "/k8s.io/" + spec.id;
  const std::string v1 = "/sys/fs/cgroup/memory" + cgroup;
  const std::string counters =
      fs::exists(v1) ? v1 + "/memory.oom_control"
                     : "/sys/fs/cgroup" + cgroup + "/memory.events";
  if (fs::exists(v1)) {
    EXPECT_EQ(ReadFile(v1 + "/memory.limit_in_bytes"), "16777216\n");
  }
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::string text;
  while (std::chrono::steady_clock::now() < deadline) {
    text = ReadFile(counters);
    if (text.find("oom_kill 1") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_NE(text.find("oom_kill 1"), std::string::npos)
      << counters << ": " << text;
}

TEST_F(ContainerdHarnessTest, StopRemovesEverything) {
  ASSERT_TRUE(server_->RunDetached(Spec("harness-stopped")).ok());
  const std::string dir = server_->dir();
  const std::string parent = server_->cgroup_parent();
  ASSERT_FALSE(ProcessesMentioning(dir + "/").empty());
  Status stopped = server_->Stop();
  ASSERT_TRUE(stopped.ok()) << stopped;
  EXPECT_FALSE(fs::exists(dir));
  const auto left = ProcessesMentioning(dir + "/");
  EXPECT_TRUE(left.empty()) << left.front();
  EXPECT_FALSE(fs::exists("/sys/fs/cgroup/memory" + parent));
  EXPECT_EQ(ReadFile("/proc/self/mountinfo").find(dir), std::string::npos);
  EXPECT_TRUE(server_->Stop().ok());
  EXPECT_EQ(server_->StartAgain().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace lens::test
