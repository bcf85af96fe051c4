// From containerd's view to a ContainerRecord: process start times, labels,
// state names and the change between two records.
#include "containers/container_record.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "core/labels.h"

namespace lens::containers {
namespace {

TEST(ProcessStartTimeTest, ReadsALiveProcessAndIsUnknownForAGoneOne) {
  const HostRoots host;
  auto mine = ProcessStartTime(host, ::getpid());
  ASSERT_TRUE(mine.has_value());
  const auto now = std::chrono::system_clock::now();
  EXPECT_LE(*mine, now);
  EXPECT_GT(*mine, now - std::chrono::hours(1)) << "this test started lately";
  EXPECT_EQ(ProcessStartTime(host, ::getpid()), mine) << "stable";
  // pid_max is at most 2^22: this one never exists. Nor does a bad root.
  EXPECT_FALSE(ProcessStartTime(host, 1 << 23).has_value());
  EXPECT_FALSE(ProcessStartTime(HostRoots::Under("/nonexistent"), 1));
  EXPECT_FALSE(ProcessStartTime(host, 0).has_value());
}

TEST(LimitLabelsTest, KeepsLabelsAndBoundsThem) {
  std::map<std::string, std::string> labels = {
      {"io.kubernetes.pod.name", "a\"b"}, {"big", std::string(5000, 'x')}};
  for (int i = 0; i < 100; ++i) labels["k" + std::to_string(i)] = "v";
  const Labels kept = LimitLabels(labels);
  ASSERT_TRUE(kept.count("io.kubernetes.pod.name"));
  EXPECT_EQ(kept.at("io.kubernetes.pod.name"), "a\"b");
  EXPECT_FALSE(kept.count("big")) << "values over 4 KiB are left out";
  EXPECT_EQ(kept.size(), 64u);
}

TEST(LimitLabelsTest, AllKeptLabelsFitTheStoresColumn) {
  // Control characters take six bytes each as JSON (\u0001).
  std::map<std::string, std::string> labels;
  for (int i = 0; i < 64; ++i) {
    labels["k" + std::to_string(i)] = std::string(4000, '\x01');
  }
  const Labels kept = LimitLabels(labels);
  EXPECT_FALSE(kept.empty());
  EXPECT_LT(kept.size(), 64u);
  EXPECT_LE(LabelsToJson(kept).size(), 48u * 1024);
}

TEST(StateOfTest, NamesTaskStates) {
  RuntimeContainer c;
  EXPECT_EQ(StateOf(c), ContainerState::kCreated);
  c.has_task = true;
  c.task_status = "stopped";
  EXPECT_EQ(StateOf(c), ContainerState::kExited);
  c.task_status = "pausing";
  EXPECT_EQ(StateOf(c), ContainerState::kPaused);
  c.task_status = "running";
  EXPECT_EQ(StateOf(c), ContainerState::kRunning);
}

TEST(DiffEventTypeTest, NamesWhatChanged) {
  ContainerRecord a;
  a.state = ContainerState::kCreated;
  ContainerRecord b = a;
  EXPECT_EQ(DiffEventType(a, b), std::nullopt);
  b.state = ContainerState::kRunning;
  EXPECT_EQ(DiffEventType(a, b), ContainerEventType::kStart);
  a.state = ContainerState::kPaused;
  EXPECT_EQ(DiffEventType(a, b), ContainerEventType::kResume);
  a.state = ContainerState::kRunning;
  b.state = ContainerState::kExited;
  EXPECT_EQ(DiffEventType(a, b), ContainerEventType::kExit);
  b = a;
  b.devices.push_back({DeviceKind::kGpu, "SER1", "0000:0c:00.0", "oci-spec"});
  EXPECT_EQ(DiffEventType(a, b), ContainerEventType::kUpdate);
}

}  // namespace
}  // namespace lens::containers
