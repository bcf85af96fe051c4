// Peak dense BF16/FP16 tensor throughput per GPU model, from the vendors'
// data sheets (dense figures: NVIDIA prints sparse ones too, at twice the
// value; where a sheet gives only the sparse figure, half of it is used).
#include <algorithm>
#include <cctype>
#include <iterator>
#include <string>
#include <vector>

#include "lens/insights.h"

namespace lens {
namespace {

// Matched as substrings of the normalised model name (lower case, letters
// and digits only), in this order: longer, more specific names first
// ("mi250x" before "mi250", "gh200" before "h200", "h100pcie" before
// "h100"), each only where no digit follows it.
struct PeakPattern {
  std::string_view pattern;
  GpuPeak peak;
};

constexpr std::string_view kAmdMi355 =
    "AMD Instinct MI350 Series data sheet (MI355X: 2.5 PFLOPS FP16/BF16 "
    "dense, 2516.6 TFLOPS)";
constexpr std::string_view kAmdMi350 =
    "AMD Instinct MI350 Series data sheet (MI350X: 2306.9 TFLOPS FP16/BF16 "
    "dense)";
constexpr std::string_view kAmdMi325 =
    "AMD Instinct MI325X data sheet (1307.4 TFLOPS BF16 dense)";
constexpr std::string_view kAmdMi300x =
    "AMD Instinct MI300X data sheet (1307.4 TFLOPS BF16 dense, 2614.9 with "
    "sparsity)";
constexpr std::string_view kAmdMi300a =
    "AMD Instinct MI300A data sheet (980.6 TFLOPS BF16 dense)";
constexpr std::string_view kAmdMi250x =
    "AMD Instinct MI250X data sheet (383 TFLOPS BF16)";
constexpr std::string_view kAmdMi250 =
    "AMD Instinct MI250 data sheet (362.1 TFLOPS BF16)";
constexpr std::string_view kAmdMi210 =
    "AMD Instinct MI210 data sheet (181 TFLOPS BF16)";
constexpr std::string_view kAmdMi100 =
    "AMD Instinct MI100 data sheet (92.3 TFLOPS BF16)";
constexpr std::string_view kNvB200 =
    "NVIDIA HGX B200 data sheet (FP16/BF16 Tensor Core 4.5 PFLOPS with "
    "sparsity per GPU; 2250 dense)";
constexpr std::string_view kNvGb200 =
    "NVIDIA GB200 NVL72 data sheet (FP16/BF16 Tensor Core 360 PFLOPS with "
    "sparsity for 72 GPUs; 2500 dense per GPU)";
constexpr std::string_view kNvH200 =
    "NVIDIA H200 Tensor Core GPU data sheet (SXM: BF16 Tensor Core 1,979 "
    "TFLOPS with sparsity; 989.5 dense)";
constexpr std::string_view kNvGh200 =
    "NVIDIA GH200 Grace Hopper Superchip data sheet (BF16 Tensor Core 1,979 "
    "TFLOPS with sparsity; 989.5 dense)";
constexpr std::string_view kNvH200Nvl =
    "NVIDIA H200 Tensor Core GPU data sheet (NVL: BF16 Tensor Core 1,671 "
    "TFLOPS with sparsity; 835.5 dense)";
constexpr std::string_view kNvH100Sxm =
    "NVIDIA H100 Tensor Core GPU data sheet (SXM: BF16 Tensor Core 1,979 "
    "TFLOPS with sparsity; 989.5 dense)";
constexpr std::string_view kNvH100Nvl =
    "NVIDIA H100 Tensor Core GPU data sheet (NVL: BF16 Tensor Core 1,671 "
    "TFLOPS with sparsity; 835.5 dense)";
constexpr std::string_view kNvH100Pcie =
    "NVIDIA H100 Tensor Core GPU data sheet (PCIe: BF16 Tensor Core 1,513 "
    "TFLOPS with sparsity; 756.5 dense)";
constexpr std::string_view kNvA100 =
    "NVIDIA A100 Tensor Core GPU data sheet (BF16 Tensor Core 312 TFLOPS "
    "dense, 624 with sparsity)";

constexpr PeakPattern kPeaks[] = {
    {"mi355x", {"MI355X", 2516.6, kAmdMi355}},
    {"mi350x", {"MI350X", 2306.9, kAmdMi350}},
    {"mi325x", {"MI325X", 1307.4, kAmdMi325}},
    {"mi300x", {"MI300X", 1307.4, kAmdMi300x}},
    {"mi300a", {"MI300A", 980.6, kAmdMi300a}},
    {"mi250x", {"MI250X", 383.0, kAmdMi250x}},
    {"mi250", {"MI250", 362.1, kAmdMi250}},
    {"mi210", {"MI210", 181.0, kAmdMi210}},
    {"mi100", {"MI100", 92.3, kAmdMi100}},
    {"gb200", {"GB200", 2500.0, kNvGb200}},
    {"b200", {"B200", 2250.0, kNvB200}},
    {"gh200", {"GH200", 989.5, kNvGh200}},
    {"h200nvl", {"H200 NVL", 835.5, kNvH200Nvl}},
    {"h200", {"H200", 989.5, kNvH200}},
    {"h100nvl", {"H100 NVL", 835.5, kNvH100Nvl}},
    {"h100pcie", {"H100 PCIe", 756.5, kNvH100Pcie}},
    {"h100", {"H100 SXM", 989.5, kNvH100Sxm}},
    {"h800pcie", {"H100 PCIe", 756.5, kNvH100Pcie}},
    {"h800", {"H100 SXM", 989.5, kNvH100Sxm}},
    {"a100", {"A100", 312.0, kNvA100}},
    {"a800", {"A100", 312.0, kNvA100}},
};

const std::vector<GpuPeak>& PeakTable() {
  static const std::vector<GpuPeak> table = [] {
    std::vector<GpuPeak> t;
    for (const PeakPattern& p : kPeaks) {
      const bool listed = std::any_of(
          t.begin(), t.end(),
          [&p](const GpuPeak& g) { return g.model == p.peak.model; });
      if (!listed) t.push_back(p.peak);
    }
    return t;
  }();
  return table;
}

}  // namespace

std::span<const GpuPeak> GpuPeaks() { return PeakTable(); }

const GpuPeak* FindGpuPeak(std::string_view model) {
  // Letters and digits only, lower case; `split[i]`: a separator followed
  // norm[i] in the name ("H100 80GB": "h10080gb", split after the "0").
  std::string norm;
  std::vector<bool> split;
  norm.reserve(model.size());
  for (char c : model) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      norm.push_back(static_cast<char>(std::tolower(u)));
      split.push_back(false);
    } else if (!norm.empty()) {
      split.back() = true;
    }
  }
  // A pattern counts where no digit follows it directly: "a100" is in "A100
  // 80GB" but not in "RTX A1000".
  auto matches = [&](std::string_view pattern) {
    for (size_t at = norm.find(pattern); at != std::string::npos;
         at = norm.find(pattern, at + 1)) {
      const size_t end = at + pattern.size();
      if (end == norm.size() || split[end - 1] ||
          !std::isdigit(static_cast<unsigned char>(norm[end]))) {
        return true;
      }
    }
    return false;
  };
  for (const PeakPattern& p : kPeaks) {
    if (!matches(p.pattern)) continue;
    for (const GpuPeak& g : PeakTable()) {
      if (g.model == p.peak.model) return &g;
    }
  }
  return nullptr;
}

}  // namespace lens
