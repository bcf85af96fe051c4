// Pure parsers for the procfs and /etc files behind NodeFacts. Each takes the
// whole file's text and never fails: what it does not recognise is left out
// (nullopt / empty), because these formats vary by architecture and kernel
// version (no "model name" on arm64, no MemAvailable before 3.14, ...).
#ifndef LENS_HOST_PROC_PARSE_H_
#define LENS_HOST_PROC_PARSE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace lens::host {

struct CpuInfo {
  std::string model;           // first "model name"
  int logical_cpus = 0;        // "processor" entries
  std::optional<int> sockets;  // distinct "physical id"; nullopt if none
};
// /proc/cpuinfo ("key\t: value" lines, a blank line between processors).
CpuInfo ParseCpuInfo(std::string_view text);

struct MemInfo {
  std::optional<uint64_t> total_bytes;
  std::optional<uint64_t> available_bytes;
};
// /proc/meminfo ("MemTotal:       16316244 kB"); kB means KiB.
MemInfo ParseMemInfo(std::string_view text);

// /proc/uptime ("3724915.42 1402251877.16"): the first number, seconds.
std::optional<double> ParseUptime(std::string_view text);

// os-release(5): KEY=VALUE lines; values unquoted, 'single' or "double"
// quoted (backslash escapes \" \\ \$ \` inside double quotes); # comments
// and blank lines ignored. Later keys win.
std::map<std::string, std::string> ParseOsRelease(std::string_view text);

// /proc/driver/nvidia/version's first line ("NVRM version: NVIDIA UNIX x86_64
// Kernel Module  550.90.07  Fri May 31 ..." or "... Open Kernel Module for
// x86_64  550.90.07  Release Build ..."): the version, "" when absent.
std::string ParseNvidiaDriverVersion(std::string_view text);

}  // namespace lens::host

#endif  // LENS_HOST_PROC_PARSE_H_
