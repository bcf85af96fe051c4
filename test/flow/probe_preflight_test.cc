// Checks made before the flow probe loads (flow/probe_preflight.h), on
// fixture trees and fake BTF lookups: no root or eBPF needed.
#include "flow/probe_preflight.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <string_view>

namespace lens {
namespace {

TEST(ProbePreflightTest, NamesBtfWhenTheKernelHasNone) {
  std::string root = ::testing::TempDir() + "/sys-no-btf";
  ASSERT_EQ(std::system(("mkdir -p " + root).c_str()), 0);
  Status st = flow::CheckKernelBtf(root);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("CONFIG_DEBUG_INFO_BTF"), std::string::npos);
  EXPECT_TRUE(flow::CheckKernelBtf("/sys").ok());  // this kernel has BTF
}

// The BTF names of what the socket-storage programs need (Linux 5.12); the
// first two are all the address-hash programs need (Linux 5.8).
const std::set<std::string, std::less<>> kNeededBtf = {
    "btf_trace_inet_sock_set_state", "BPF_FUNC_ringbuf_reserve",
    "bpf_iter__bpf_sk_storage_map", "btf_bpf_sk_storage_get_tracing",
    "BPF_FUNC_check_mtu"};
const std::set<std::string, std::less<>> kAlwaysNeededBtf = {
    "btf_trace_inet_sock_set_state", "BPF_FUNC_ringbuf_reserve"};

TEST(ProbePreflightTest, ANewKernelRunsTheSocketStoragePrograms) {
  auto kernel = flow::ProbeKernelFrom([](std::string_view name) {
    return kNeededBtf.count(name) > 0 || name == "btf_trace_sock_send_length" ||
           name == "btf_trace_sock_recv_length" ||
           name == "btf_trace_tcp_retransmit_skb";
  });
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_TRUE(kernel->socket_storage);
  EXPECT_EQ(kernel->socket_storage_missing, "");
  EXPECT_TRUE(kernel->send_recv_tracepoints);
  EXPECT_FALSE(kernel->tcp_probe_tracepoint);
  EXPECT_TRUE(kernel->retransmit_tracepoint);
}

TEST(ProbePreflightTest, FallsBackToKprobesWithoutByteTracepoints) {
  // Linux 5.12 to 6.2: the state and tcp tracepoints, no sock_*_length.
  auto kernel = flow::ProbeKernelFrom([](std::string_view name) {
    return kNeededBtf.count(name) > 0 || name == "btf_trace_tcp_probe";
  });
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_FALSE(kernel->send_recv_tracepoints);
  EXPECT_TRUE(kernel->tcp_probe_tracepoint);
  EXPECT_FALSE(kernel->retransmit_tracepoint);
}

TEST(ProbePreflightTest, AKernelWithoutSocketStorageRunsTheAddressHash) {
  // Linux 5.10: the state tracepoint, the ring buffer and the iterator, not
  // socket storage in tracing programs nor the 5.12 instructions.
  auto old = flow::ProbeKernelFrom([](std::string_view name) {
    return kAlwaysNeededBtf.count(name) > 0 ||
           name == "bpf_iter__bpf_sk_storage_map";
  });
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_FALSE(old->socket_storage);
  const std::string& why = old->socket_storage_missing;
  EXPECT_NE(why.find("btf_bpf_sk_storage_get_tracing"), std::string::npos)
      << why;
  EXPECT_NE(why.find("BPF_FUNC_check_mtu"), std::string::npos) << why;
  EXPECT_EQ(why.find("bpf_iter__bpf_sk_storage_map"), std::string::npos) << why;
  // Each socket-storage need on its own is checked.
  for (const std::string& lacking : kNeededBtf) {
    if (kAlwaysNeededBtf.count(lacking)) continue;
    auto kernel = flow::ProbeKernelFrom([&](std::string_view name) {
      return kNeededBtf.count(name) > 0 && name != lacking;
    });
    ASSERT_TRUE(kernel.ok()) << lacking << ": " << kernel.status();
    EXPECT_FALSE(kernel->socket_storage) << lacking;
    EXPECT_NE(kernel->socket_storage_missing.find(lacking), std::string::npos)
        << kernel->socket_storage_missing;
  }
}

TEST(ProbePreflightTest, NamesEachFeatureATooOldKernelLacks) {
  // Linux 5.4: the state tracepoint, no ring buffer.
  auto old = flow::ProbeKernelFrom([](std::string_view name) {
    return name == "btf_trace_inet_sock_set_state";
  });
  ASSERT_EQ(old.status().code(), StatusCode::kFailedPrecondition);
  const std::string message(old.status().message());
  EXPECT_NE(message.find("Linux 5.8"), std::string::npos) << message;
  EXPECT_NE(message.find("BPF_FUNC_ringbuf_reserve"), std::string::npos);
  EXPECT_EQ(message.find("inet_sock_set_state"), std::string::npos) << message;
  for (const std::string& lacking : kAlwaysNeededBtf) {
    auto kernel = flow::ProbeKernelFrom([&](std::string_view name) {
      return kNeededBtf.count(name) > 0 && name != lacking;
    });
    EXPECT_EQ(kernel.status().code(), StatusCode::kFailedPrecondition)
        << lacking;
    EXPECT_NE(kernel.status().message().find(lacking), std::string::npos);
  }
}

TEST(ProbePreflightTest, RefusedTracingProgramsNameTheLockdownMode) {
  const std::string root =
      testing::TempDir() + "lens-lockdown-" + std::to_string(::getpid());
  std::filesystem::create_directories(root + "/kernel/security");
  std::ofstream(root + "/kernel/security/lockdown")
      << "none [integrity] confidentiality\n";
  auto all = [](std::string_view name) { return kNeededBtf.count(name) > 0; };
  auto kernel = flow::ProbeKernelFrom(all, /*tracing_programs=*/false, root);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_FALSE(kernel->socket_storage);
  EXPECT_NE(kernel->socket_storage_missing.find("BPF_PROG_TYPE_TRACING"),
            std::string::npos);
  EXPECT_NE(
      kernel->socket_storage_missing.find("kernel lockdown is \"integrity\""),
      std::string::npos)
      << kernel->socket_storage_missing;
  std::ofstream(root + "/kernel/security/lockdown")
      << "[none] integrity confidentiality\n";
  EXPECT_EQ(flow::TracingProgramsRefused(root).find("lockdown"),
            std::string::npos);
  EXPECT_TRUE(flow::ProbeKernelFrom(all, true, root)->socket_storage);
  std::filesystem::remove_all(root);
}

TEST(ProbePreflightTest, PrivilegesFromCapEff) {
  std::string root = ::testing::TempDir() + "/proc-caps";
  ASSERT_EQ(std::system(("mkdir -p " + root + "/self").c_str()), 0);
  auto write = [&](const char* capeff) {
    FILE* f = std::fopen((root + "/self/status").c_str(), "w");
    std::fprintf(f, "Name:\ttest\nCapInh:\t0000000000000000\nCapEff:\t%s\n",
                 capeff);
    std::fclose(f);
  };
  write("000001ffffffffff");  // root
  EXPECT_TRUE(flow::CheckBpfPrivileges(root).ok());
  write("000000c000000000");  // CAP_BPF + CAP_PERFMON
  EXPECT_TRUE(flow::CheckBpfPrivileges(root).ok());
  write("0000008000000000");  // CAP_BPF alone
  Status st = flow::CheckBpfPrivileges(root);
  EXPECT_EQ(st.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(st.message().find("CAP_PERFMON"), std::string::npos);
  write("0000000000000000");
  EXPECT_EQ(flow::CheckBpfPrivileges(root).code(),
            StatusCode::kPermissionDenied);
}

}  // namespace
}  // namespace lens
