// Plan and apply on a copy of a node's /proc/sys and /etc (fixture): what
// differs is shown and written, nothing else is touched, a second apply
// writes nothing, drift behind the tuner's back is found and repaired, and
// a spec that is refused writes nothing.
#include "tuner/tuner.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace lens {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void Write(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// Every regular file under `root`: content, inode and mtime, so a test sees
// any write, rename or touch.
struct FileState {
  std::string content;
  ino_t inode = 0;
  int64_t mtime_ns = 0;
  bool operator==(const FileState&) const = default;
  friend void PrintTo(const FileState& f, std::ostream* os) {
    *os << "inode " << f.inode << " mtime " << f.mtime_ns << " \"" << f.content
        << "\"";
  }
};
std::map<std::string, FileState> Snapshot(const fs::path& root) {
  std::map<std::string, FileState> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file()) continue;
    struct stat st {};
    ::stat(e.path().c_str(), &st);
    out[fs::relative(e.path(), root).string()] = {
        Read(e.path()), st.st_ino,
        int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec};
  }
  return out;
}

class TunerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) /
            ("tuner-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::copy(fs::path(LENS_FIXTURES_DIR) / "tuner/root", root_,
             fs::copy_options::recursive);
    spec_.proc_root = (root_ / "proc").string();
    spec_.etc_root = (root_ / "etc").string();
    spec_.sysctls = {{"vm.max_map_count", "262144"},
                     {"net.ipv4.tcp_rmem", "4096 131072 33554432"},
                     {"fs.inotify.max_user_instances", "8192"}};
    spec_.limits = {{.item = "nofile", .value = "131072"},
                    {.domain = "@gpu",
                     .type = TunerLimit::Type::kHard,
                     .item = "memlock",
                     .value = "unlimited"}};
  }
  void TearDown() override { fs::remove_all(root_); }

  std::vector<std::string> Changes(const TuningSpec& spec) {
    auto plan = PlanTuning(spec);
    EXPECT_TRUE(plan.ok()) << plan.status();
    std::vector<std::string> out;
    if (!plan.ok()) return out;
    for (const TuningSetting& s : plan->settings)
      if (!s.in_sync) out.push_back(FormatTuningChange(s));
    return out;
  }

  fs::path root_;
  TuningSpec spec_;
};

TEST_F(TunerTest, PlanShowsEachChangeAndWritesNothing) {
  const auto before = Snapshot(root_);
  // tcp_rmem reads "4096\t131072\t33554432": already in sync.
  EXPECT_EQ(Changes(spec_),
            (std::vector<std::string>{
                "sysctl fs.inotify.max_user_instances: 128 -> 8192",
                "sysctl vm.max_map_count: 65530 -> 262144",
                "limits nofile: absent -> 131072",
                "limits @gpu memlock/hard: absent -> unlimited",
                "file security/limits.d/90-lens.conf: absent -> 2 lines",
                "file sysctl.d/90-lens.conf: absent -> 3 lines"}));
  EXPECT_EQ(Snapshot(root_), before);
}

TEST_F(TunerTest, ApplyWritesWhatDiffersAndLeavesOtherFilesAlone) {
  auto before = Snapshot(root_);
  auto plan = PlanTuning(spec_);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const auto outcomes = ApplyTuning(spec_, *plan);
  EXPECT_EQ(outcomes.size(), 6u);
  for (const TuningOutcome& o : outcomes)
    EXPECT_TRUE(o.status.ok()) << o.setting.key << ": " << o.status;
  EXPECT_EQ(Read(root_ / "proc/sys/vm/max_map_count"), "262144\n");
  EXPECT_EQ(Read(root_ / "proc/sys/fs/inotify/max_user_instances"), "8192\n");
  EXPECT_EQ(Read(root_ / "etc/security/limits.d/90-lens.conf"),
            "# Written by lens-tuner from tuner.limits in the Lens config "
            "(docs/tuner.md).\n# Edits here are reverted at its next check.\n"
            "*\t-\tnofile\t131072\n"
            "@gpu\thard\tmemlock\tunlimited\n");
  EXPECT_EQ(Read(root_ / "etc/sysctl.d/90-lens.conf"),
            "# Written by lens-tuner from tuner.sysctls in the Lens config "
            "(docs/tuner.md).\n# Edits here are reverted at its next check.\n"
            "fs.inotify.max_user_instances = 8192\n"
            "net.ipv4.tcp_rmem = 4096 131072 33554432\n"
            "vm.max_map_count = 262144\n");
  struct stat st {};
  ASSERT_EQ(::stat((root_ / "etc/sysctl.d/90-lens.conf").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  // Everything else as it was: the site's files, the in-sync sysctl, and no
  // temporary file left behind.
  auto after = Snapshot(root_);
  for (const char* ours :
       {"proc/sys/vm/max_map_count", "proc/sys/fs/inotify/max_user_instances",
        "etc/security/limits.d/90-lens.conf", "etc/sysctl.d/90-lens.conf"}) {
    EXPECT_EQ(after.erase(ours), 1u) << ours;
    before.erase(ours);
  }
  EXPECT_EQ(after, before);
}

TEST_F(TunerTest, SecondApplyWritesNothing) {
  auto plan = PlanTuning(spec_);
  ASSERT_TRUE(plan.ok());
  ApplyTuning(spec_, *plan);
  // Back-date every file, so a rewrite of the same bytes would show.
  for (const auto& e : fs::recursive_directory_iterator(root_)) {
    if (e.is_regular_file())
      fs::last_write_time(e.path(), fs::file_time_type(std::chrono::hours(1)));
  }
  const auto before = Snapshot(root_);
  auto again = PlanTuning(spec_);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->changes(), 0u);
  EXPECT_TRUE(ApplyTuning(spec_, *again).empty());
  EXPECT_EQ(Snapshot(root_), before);
}

TEST_F(TunerTest, DriftBehindItsBackIsFoundAndRepaired) {
  auto plan = PlanTuning(spec_);
  ASSERT_TRUE(plan.ok());
  ApplyTuning(spec_, *plan);
  Write(root_ / "proc/sys/vm/max_map_count", "65530\n");
  const fs::path limits = root_ / "etc/security/limits.d/90-lens.conf";
  const std::string written = Read(limits);
  Write(limits, written + "*\t-\tnproc\t10\n");
  EXPECT_EQ(Changes(spec_),
            (std::vector<std::string>{
                "sysctl vm.max_map_count: 65530 -> 262144",
                "file security/limits.d/90-lens.conf: 3 lines (differs) -> 2 "
                "lines"}));
  // A hand edit of one of our values shows as that limit.
  Write(limits, written.substr(0, written.find("131072")) + "1024\n" +
                    "@gpu\thard\tmemlock\tunlimited\n");
  EXPECT_EQ(Changes(spec_)[1], "limits nofile: 1024 -> 131072");
  plan = PlanTuning(spec_);
  ASSERT_TRUE(plan.ok());
  for (const TuningOutcome& o : ApplyTuning(spec_, *plan))
    EXPECT_TRUE(o.status.ok()) << o.status;
  EXPECT_EQ(Read(root_ / "proc/sys/vm/max_map_count"), "262144\n");
  EXPECT_EQ(Read(limits), written);
  EXPECT_TRUE(Changes(spec_).empty());
}

TEST_F(TunerTest, AnEmptySpecRemovesOnlyOurFiles) {
  auto plan = PlanTuning(spec_);
  ASSERT_TRUE(plan.ok());
  ApplyTuning(spec_, *plan);
  TuningSpec empty = spec_;
  empty.sysctls.clear();
  empty.limits.clear();
  EXPECT_EQ(Changes(empty),
            (std::vector<std::string>{
                "file security/limits.d/90-lens.conf: 2 lines (differs) -> "
                "absent",
                "file sysctl.d/90-lens.conf: 3 lines (differs) -> absent"}));
  plan = PlanTuning(empty);
  ASSERT_TRUE(plan.ok());
  ApplyTuning(empty, *plan);
  EXPECT_FALSE(fs::exists(root_ / "etc/security/limits.d/90-lens.conf"));
  EXPECT_FALSE(fs::exists(root_ / "etc/sysctl.d/90-lens.conf"));
  EXPECT_TRUE(fs::exists(root_ / "etc/security/limits.d/80-site.conf"));
  EXPECT_TRUE(fs::exists(root_ / "etc/sysctl.d/10-site.conf"));
  // The live value stays: the tuner does not know what it was before.
  EXPECT_EQ(Read(root_ / "proc/sys/vm/max_map_count"), "262144\n");
  EXPECT_TRUE(Changes(empty).empty());
}

TEST_F(TunerTest, WithoutPersistTheSysctlFileIsNotManaged) {
  spec_.persist = false;
  spec_.limits.clear();
  auto plan = PlanTuning(spec_);
  ASSERT_TRUE(plan.ok());
  for (const TuningOutcome& o : ApplyTuning(spec_, *plan))
    EXPECT_TRUE(o.status.ok()) << o.status;
  EXPECT_EQ(Read(root_ / "proc/sys/vm/max_map_count"), "262144\n");
  EXPECT_FALSE(fs::exists(root_ / "etc/sysctl.d/90-lens.conf"));
  EXPECT_TRUE(Changes(spec_).empty());
}

TEST_F(TunerTest, ASysctlThisKernelLacksIsAnErrorAndNotCreated) {
  spec_.sysctls = {{"kernel.threads-max", "100000"}};
  auto plan = PlanTuning(spec_);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_FALSE(plan->settings.empty());
  const TuningSetting& s = plan->settings.front();
  EXPECT_FALSE(s.in_sync);
  EXPECT_EQ(FormatTuningChange(s),
            "sysctl kernel.threads-max: cannot read: this kernel has no " +
                (root_ / "proc/sys/kernel/threads-max").string());
  for (const TuningOutcome& o : ApplyTuning(spec_, *plan))
    EXPECT_NE(o.setting.key, "kernel.threads-max");
  EXPECT_FALSE(fs::exists(root_ / "proc/sys/kernel/threads-max"));
}

TEST_F(TunerTest, ARefusedSpecPlansAndWritesNothing) {
  const auto before = Snapshot(root_);
  TuningSpec bad = spec_;
  bad.sysctls["vm.max_map_cont"] = "262144";
  auto plan = PlanTuning(bad);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(plan.status().message().find(
                "unknown key \"vm.max_map_cont\" (did you mean "
                "vm.max_map_count?)"),
            std::string::npos)
      << plan.status();
  bad = spec_;
  bad.limits.push_back({.item = "nofile", .value = "unlimited"});
  EXPECT_FALSE(PlanTuning(bad).ok());
  bad = spec_;
  bad.proc_root = "relative/proc";
  EXPECT_EQ(PlanTuning(bad).status().message(),
            "procRoot: must be an absolute path");
  // Applying a good plan with a refused spec writes nothing either.
  auto good = PlanTuning(spec_);
  ASSERT_TRUE(good.ok());
  bad = spec_;
  bad.sysctls["vm.swappiness"] = "300";
  for (const TuningOutcome& o : ApplyTuning(bad, *good))
    EXPECT_EQ(o.status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Snapshot(root_), before);
}

}  // namespace
}  // namespace lens
