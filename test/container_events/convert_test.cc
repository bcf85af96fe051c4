#include "container_events/convert.h"

#include <gtest/gtest.h>

namespace lens::container_events {
namespace {

Timestamp At(int64_t us) { return FromUnixMicros(us); }

ContainerRecord FullContainer() {
  ContainerRecord c;
  c.container_id = "3f2a9c";
  c.node = "gpu-node-7";
  c.runtime_namespace = "k8s.io";
  c.pod_uid = "6b1c0e8e-1d2f-4b7a-9c1e-0f5d2a3b4c5d";
  c.pod_name = "trainer-0";
  c.pod_namespace = "ml";
  c.container_name = "pytorch";
  c.image = "registry.local/train:1.2";
  c.state = ContainerState::kExited;
  c.privileged = true;
  c.pid = 4242;
  c.exit_code = 137;
  c.labels = {{"app", "train"}};
  c.created_at = At(1714550000000001);
  c.started_at = At(1714550001000002);
  c.finished_at = At(1714553600000003);
  c.updated_at = At(1714553600000004);
  c.devices = {
      {DeviceKind::kGpu, "GPU-SERIAL-0", "0000:1b:00.0", "pod-resources"},
      {DeviceKind::kRdma, "mlx5_0", "0000:1c:00.0", "oci-spec"}};
  return c;
}

void ExpectSame(const ContainerRecord& a, const ContainerRecord& b) {
  EXPECT_EQ(a.container_id, b.container_id);
  EXPECT_EQ(a.node, b.node);
  EXPECT_EQ(a.runtime_namespace, b.runtime_namespace);
  EXPECT_EQ(a.pod_uid, b.pod_uid);
  EXPECT_EQ(a.pod_name, b.pod_name);
  EXPECT_EQ(a.pod_namespace, b.pod_namespace);
  EXPECT_EQ(a.container_name, b.container_name);
  EXPECT_EQ(a.image, b.image);
  EXPECT_EQ(a.state, b.state);
  EXPECT_EQ(a.privileged, b.privileged);
  EXPECT_EQ(a.pid, b.pid);
  EXPECT_EQ(a.exit_code, b.exit_code);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.created_at, b.created_at);
  EXPECT_EQ(a.started_at, b.started_at);
  EXPECT_EQ(a.finished_at, b.finished_at);
  EXPECT_EQ(a.updated_at, b.updated_at);
  ASSERT_EQ(a.devices.size(), b.devices.size());
  for (size_t i = 0; i < a.devices.size(); ++i) {
    EXPECT_EQ(a.devices[i].kind, b.devices[i].kind);
    EXPECT_EQ(a.devices[i].device_key, b.devices[i].device_key);
    EXPECT_EQ(a.devices[i].bdf, b.devices[i].bdf);
    EXPECT_EQ(a.devices[i].source, b.devices[i].source);
  }
}

TEST(ContainerConvertTest, ContainerRoundTripsWithEveryField) {
  const ContainerRecord c = FullContainer();
  lens::v1::ContainerState proto;
  ToProto(c, &proto);
  EXPECT_EQ(proto.created_at_us(), 1714550000000001);
  EXPECT_TRUE(proto.has_exit_code());
  EXPECT_EQ(proto.exit_code(), 137);
  ASSERT_EQ(proto.devices_size(), 2);
  EXPECT_EQ(proto.devices(0).key(), "GPU-SERIAL-0");
  // Through the wire bytes, as the stream carries it.
  lens::v1::ContainerState parsed;
  ASSERT_TRUE(parsed.ParseFromString(proto.SerializeAsString()));
  ExpectSame(FromProto(parsed, "gpu-node-7"), c);
}

TEST(ContainerConvertTest, AbsentOptionalsStayAbsent) {
  ContainerRecord c;
  c.container_id = "abc";
  c.state = ContainerState::kCreated;
  c.updated_at = At(1714550000000000);
  lens::v1::ContainerState proto;
  ToProto(c, &proto);
  EXPECT_FALSE(proto.has_exit_code());
  EXPECT_EQ(proto.started_at_us(), 0);
  EXPECT_EQ(proto.finished_at_us(), 0);
  EXPECT_EQ(proto.created_at_us(), 0);
  const ContainerRecord back = FromProto(proto, "n1");
  EXPECT_FALSE(back.exit_code.has_value());
  EXPECT_FALSE(back.started_at.has_value());
  EXPECT_FALSE(back.finished_at.has_value());
  EXPECT_EQ(back.created_at, Timestamp{});
  EXPECT_EQ(back.node, "n1");
  EXPECT_TRUE(back.devices.empty());
}

TEST(ContainerConvertTest, ExitCodeZeroIsKeptApartFromAbsent) {
  ContainerRecord c = FullContainer();
  c.exit_code = 0;
  lens::v1::ContainerState proto;
  ToProto(c, &proto);
  EXPECT_TRUE(proto.has_exit_code());
  ASSERT_TRUE(FromProto(proto, "n").exit_code.has_value());
  EXPECT_EQ(*FromProto(proto, "n").exit_code, 0);
}

TEST(ContainerConvertTest, EmptyLabelsBecomeAnEmptyObject) {
  lens::v1::ContainerState proto;
  proto.set_container_id("x");
  EXPECT_TRUE(FromProto(proto, "n").labels.empty());
}

TEST(ContainerConvertTest, LabelsTravelAsAMapOfValidUtf8) {
  ContainerRecord c = FullContainer();
  c.labels = {{"team", "\xe5\xb1\xb1\xe7\x94\xb0"}, {"bad\xc3", "v\xff"}};
  lens::v1::ContainerState proto;
  ToProto(c, &proto);
  std::string wire;
  ASSERT_TRUE(proto.SerializeToString(&wire));
  lens::v1::ContainerState parsed;
  ASSERT_TRUE(parsed.ParseFromString(wire)) << "proto3 rejects invalid UTF-8";
  const Labels back = FromProto(parsed, "n").labels;
  EXPECT_EQ(back, (Labels{{"team", "\xe5\xb1\xb1\xe7\x94\xb0"},
                          {"bad\xEF\xBF\xBD", "v\xEF\xBF\xBD"}}));
}

TEST(ContainerConvertTest, ChangeRoundTripsAsEventRowAndState) {
  ContainerChange change;
  change.container = FullContainer();
  change.event.container_id = change.container.container_id;
  change.event.node = "gpu-node-7";
  change.event.event_type = ContainerEventType::kOom;
  change.event.at = At(1714553599000000);
  lens::v1::ContainerEvent proto;
  ToProto(change, &proto);
  EXPECT_EQ(proto.event_type(), "oom");
  EXPECT_EQ(proto.at_us(), 1714553599000000);
  EXPECT_TRUE(proto.container().oom_killed());

  const ContainerChange back = FromProto(proto, "gpu-node-7", 42);
  ExpectSame(back.container, change.container);
  EXPECT_EQ(back.event.container_id, "3f2a9c");
  EXPECT_EQ(back.event.node, "gpu-node-7");
  EXPECT_EQ(back.event.event_type, ContainerEventType::kOom);
  EXPECT_EQ(back.event.sequence, 42);
  EXPECT_EQ(back.event.at, change.event.at);
  EXPECT_EQ(back.event.detail_json, R"({"exit_code":137,"oom_killed":true})");
}

TEST(ContainerConvertTest, EventDetailIsEmptyWithoutExitFacts) {
  ContainerChange change;
  change.container.container_id = "c1";
  change.container.updated_at = At(1);
  change.event.event_type = ContainerEventType::kStart;
  change.event.at = At(2);
  lens::v1::ContainerEvent proto;
  ToProto(change, &proto);
  EXPECT_FALSE(proto.container().oom_killed());
  EXPECT_EQ(FromProto(proto, "n", 1).event.detail_json, "{}");
}

TEST(ContainerConvertTest, HugeSequenceIsClampedToTheStoreRange) {
  lens::v1::ContainerEvent proto;
  proto.mutable_container()->set_container_id("c1");
  EXPECT_EQ(FromProto(proto, "n", ~uint64_t{0}).event.sequence,
            std::numeric_limits<int64_t>::max());
}

}  // namespace
}  // namespace lens::container_events
