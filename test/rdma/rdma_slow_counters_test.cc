// RdmaReaderOptions::slow_counter_stride: traffic counters and port state on
// every sample, the other counters every stride-th sample of a port, the
// ports staggered, the last values kept in between.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lens/rdma.h"
#include "temp_host_tree.h"

namespace lens {
namespace {

using testing_rdma::Overwrite;
using testing_rdma::TempHostTree;

const RdmaCounter* Find(const RdmaPortCounters& port, const std::string& name) {
  for (const RdmaCounter& c : port.counters) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::vector<std::string> Names(const RdmaPortCounters& port) {
  std::vector<std::string> names;
  for (const RdmaCounter& c : port.counters) names.push_back(c.name);
  return names;
}

class SlowCountersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(reader_.Scan().ok());
    ASSERT_TRUE(reader_.Sample(&out_).ok());  // first sample: everything
    ASSERT_EQ(out_.size(), 2u);
    first_names_ = Names(out_[0]);
  }
  std::string Port(int device) const {
    return tree_.sys("class/infiniband/mlx5_" + std::to_string(device) +
                     "/ports/1/");
  }
  // Moves a traffic counter and a slow one (a counters/ error counter and a
  // hw counter) of both ports to `value`.
  void MoveAll(uint64_t value) {
    for (int d : {0, 1}) {
      Overwrite(Port(d) + "counters/port_xmit_data", std::to_string(value));
      Overwrite(Port(d) + "counters/symbol_error", std::to_string(value));
      Overwrite(Port(d) + "hw_counters/out_of_buffer", std::to_string(value));
    }
  }

  TempHostTree tree_{"mi250-mi210"};
  RdmaReader reader_{tree_.roots(), RdmaReaderOptions{2}};
  std::vector<RdmaPortCounters> out_;
  std::vector<std::string> first_names_;
};

TEST_F(SlowCountersTest, TrafficEverySampleSlowCountersEveryOtherStaggered) {
  MoveAll(100);
  ASSERT_TRUE(reader_.Sample(&out_).ok());
  // Traffic moved on both ports; the slow counters on one port only.
  EXPECT_EQ(out_[0].tx_bytes, 400u);
  EXPECT_EQ(out_[1].tx_bytes, 400u);
  const bool port0_due = Find(out_[0], "symbol_error")->value == 100;
  const int due = port0_due ? 0 : 1;
  const int kept = 1 - due;
  EXPECT_EQ(Find(out_[due], "symbol_error")->value, 100u);
  EXPECT_EQ(Find(out_[due], "out_of_buffer")->value, 100u);
  EXPECT_NE(Find(out_[kept], "symbol_error")->value, 100u);
  EXPECT_NE(Find(out_[kept], "out_of_buffer")->value, 100u);
  // The kept values are still there, in place.
  EXPECT_EQ(Names(out_[0]), first_names_);

  MoveAll(200);
  ASSERT_TRUE(reader_.Sample(&out_).ok());
  EXPECT_EQ(Find(out_[kept], "symbol_error")->value, 200u);
  EXPECT_EQ(Find(out_[kept], "out_of_buffer")->value, 200u);
  EXPECT_EQ(Find(out_[due], "symbol_error")->value, 100u);
  EXPECT_EQ(out_[due].tx_bytes, 800u);
}

TEST_F(SlowCountersTest, StateIsReadEverySample) {
  Overwrite(Port(0) + "state", "1: DOWN\n");
  Overwrite(Port(1) + "state", "1: DOWN\n");
  ASSERT_TRUE(reader_.Sample(&out_).ok());
  EXPECT_EQ(out_[0].state, "DOWN");
  EXPECT_EQ(out_[1].state, "DOWN");
}

TEST_F(SlowCountersTest, ASlowCounterThatTurnsUnreadableIsDroppedWhenDue) {
  for (int d : {0, 1}) {
    Overwrite(Port(d) + "hw_counters/out_of_buffer", "N/A\n");
  }
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(reader_.Sample(&out_).ok());
  // Both ports have had their due sample: the value is gone, never 0, and
  // every other counter is still in place.
  for (int d : {0, 1}) {
    EXPECT_EQ(Find(out_[d], "out_of_buffer"), nullptr);
    EXPECT_EQ(out_[d].counters.size(), first_names_.size() - 1);
  }
  for (int d : {0, 1}) Overwrite(Port(d) + "hw_counters/out_of_buffer", "9\n");
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(reader_.Sample(&out_).ok());
  EXPECT_EQ(Names(out_[0]), first_names_);
  EXPECT_EQ(Find(out_[1], "out_of_buffer")->value, 9u);
}

TEST_F(SlowCountersTest, AFreshOutputVectorGetsEveryCounter) {
  // A caller that does not pass the last output back loses nothing: a port
  // entry that is not this port's is read in full.
  std::vector<RdmaPortCounters> fresh;
  ASSERT_TRUE(reader_.Sample(&fresh).ok());
  EXPECT_EQ(Names(fresh[0]), first_names_);
  EXPECT_EQ(Names(fresh[1]), Names(out_[1]));
}

TEST_F(SlowCountersTest, ARescanReadsEverythingAgain) {
  ASSERT_TRUE(reader_.Scan().ok());
  MoveAll(300);
  ASSERT_TRUE(reader_.Sample(&out_).ok());
  EXPECT_EQ(Find(out_[0], "symbol_error")->value, 300u);
  EXPECT_EQ(Find(out_[1], "out_of_buffer")->value, 300u);
}

}  // namespace
}  // namespace lens
