// From containerd's view to a ContainerRecord: process start times, labels,
// state names and the change between two records.
#include "containers/container_record.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <unistd.h>

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

TEST(LabelsJsonTest, KeepsLabelsEscapedAndBounded) {
  std::map<std::string, std::string> labels = {
      {"io.kubernetes.pod.name", "a\"b"}, {"big", std::string(5000, 'x')}};
  for (int i = 0; i < 100; ++i) labels["k" + std::to_string(i)] = "v";
  rapidjson::Document doc;
  doc.Parse(LabelsJson(labels).c_str());
  ASSERT_FALSE(doc.HasParseError());
  EXPECT_STREQ(doc["io.kubernetes.pod.name"].GetString(), "a\"b");
  EXPECT_FALSE(doc.HasMember("big")) << "values over 4 KiB are left out";
  EXPECT_EQ(doc.MemberCount(), 64u);
}

TEST(StateOfTest, NamesTaskStates) {
  RuntimeContainer c;
  EXPECT_EQ(StateOf(c), "created");
  c.has_task = true;
  c.task_status = "stopped";
  EXPECT_EQ(StateOf(c), "exited");
  c.task_status = "pausing";
  EXPECT_EQ(StateOf(c), "paused");
  c.task_status = "running";
  EXPECT_EQ(StateOf(c), "running");
}

TEST(DiffEventTypeTest, NamesWhatChanged) {
  ContainerRecord a;
  a.state = "created";
  ContainerRecord b = a;
  EXPECT_EQ(DiffEventType(a, b), "");
  b.state = "running";
  EXPECT_EQ(DiffEventType(a, b), "start");
  a.state = "paused";
  EXPECT_EQ(DiffEventType(a, b), "resume");
  a.state = "running";
  b.state = "exited";
  EXPECT_EQ(DiffEventType(a, b), "exit");
  b = a;
  b.devices.push_back({"gpu", "SER1", "0000:0c:00.0", "oci-spec"});
  EXPECT_EQ(DiffEventType(a, b), "update");
}

}  // namespace
}  // namespace lens::containers
