// gpu_metrics layouts and the parser. Offsets are those of the
// gpu_metrics_v*_* structs of kgd_pp_interface.h under the x86-64 C ABI
// (natural alignment; the 1.0 and 2.0 tables have a hole after the header).
// test/fixtures/gpu-metrics/make_gpu_metrics.py lays the same structs out
// independently (ctypes) and writes the fixtures the tests parse.
#include "gpu/amdgpu_metrics.h"

#include <bit>
#include <cstring>

namespace lens {
namespace {

static_assert(std::endian::native == std::endian::little,
              "gpu_metrics is a native-endian kernel ABI read on x86-64/arm64");

// Units of a layout's temperature, power and activity fields; clocks are
// always MHz. 1.x: degrees, watts, percent (the 1.4+ comments say so; the
// older dGPU tables carry the same SMU values). 2.x: centi-degrees,
// milliwatts, centi-percent (2.4's comments; renoir/vangogh divide by 100
// and 1000 alike for the hwmon values). 3.0: percent and milliwatts per its
// comments; its temperature unit is undocumented and is not read.
enum class Scale : uint8_t { kDgpu, kApuCenti, kApuV3 };

// How a layout reports throttling.
enum class Throttle : uint8_t {
  kNone,         // no throttle field, or only ASIC-dependent bits
  kIndependent,  // u64 indep_throttle_status (SMU_THROTTLER_* bits)
  kSmu13_0_6,    // u32 throttle_status with SMU 13.0.6 (MI300) bits
};

struct Field {
  uint16_t offset = 0;
  uint8_t bytes = 0;  // 0: not in this layout
};
constexpr Field U16(uint16_t offset) { return {offset, 2}; }
constexpr Field U32(uint16_t offset) { return {offset, 4}; }
constexpr Field U64(uint16_t offset) { return {offset, 8}; }

struct Layout {
  uint8_t format = 0;
  uint8_t content = 0;
  uint16_t size = 0;
  Scale scale = Scale::kDgpu;
  Field temp_edge, temp_hotspot, temp_mem, power, gfx_activity, umc_activity;
  Field energy;
  // gfxclk is the first of kAmdMaxXcds u16s when per_xcd_clocks.
  Field gfxclk, socclk, uclk, vclk, dclk;
  bool per_xcd_clocks = false;
  Field throttle;
  Throttle throttle_kind = Throttle::kNone;
  // accumulation_counter, then prochot, ppt, socket, vr and hbm residency.
  Field residency;
  Field num_partition;
  uint16_t xcp_offset = 0;  // xcp_stats[NUM_XCP]; gfx_busy_inst[] first
  uint16_t xcp_stride = 0;  // sizeof one amdgpu_xcp_metrics*
};

constexpr Layout Base(uint8_t format, uint8_t content, uint16_t size,
                      Scale scale) {
  Layout l{};
  l.format = format;
  l.content = content;
  l.size = size;
  l.scale = scale;
  return l;
}

constexpr Layout Clocks(Layout l, uint16_t gfx, uint16_t soc, uint16_t mem,
                        uint16_t video, uint16_t decode) {
  l.gfxclk = U16(gfx);
  l.socclk = U16(soc);
  l.uclk = U16(mem);
  l.vclk = U16(video);
  l.dclk = U16(decode);
  return l;
}

// The 1.0-1.3 dGPU tables: temperatures edge/hotspot/mem at `temps`,
// activities gfx/umc at `activity`.
constexpr Layout V1Classic(uint8_t content, uint16_t size, uint16_t temps,
                           uint16_t activity, uint16_t power, Field energy,
                           uint16_t clocks) {
  Layout l = Base(1, content, size, Scale::kDgpu);
  l.temp_edge = U16(temps);
  l.temp_hotspot = U16(temps + 2);
  l.temp_mem = U16(temps + 4);
  l.gfx_activity = U16(activity);
  l.umc_activity = U16(activity + 2);
  l.power = U16(power);
  l.energy = energy;
  return Clocks(l, clocks, clocks + 2, clocks + 4, clocks + 6, clocks + 8);
}

// The MI300 tables (1.4+): per-instance clock arrays from `gfxclk` on
// (gfxclk[8], socclk[4], vclk0[4], dclk0[4], uclk).
constexpr Layout Mi300(uint8_t content, uint16_t size, uint16_t energy,
                       uint16_t gfxclk) {
  Layout l = Base(1, content, size, Scale::kDgpu);
  l.temp_hotspot = U16(4);
  l.temp_mem = U16(6);
  l.power = U16(10);
  l.gfx_activity = U16(12);
  l.umc_activity = U16(14);
  l.energy = U64(energy);
  l.per_xcd_clocks = true;
  return Clocks(l, gfxclk, gfxclk + 16, gfxclk + 40, gfxclk + 24, gfxclk + 32);
}

constexpr Layout WithThrottle(Layout l, Field f, Throttle kind) {
  l.throttle = f;
  l.throttle_kind = kind;
  return l;
}
constexpr Layout WithResidency(Layout l, uint16_t offset) {
  l.residency = U32(offset);
  return l;
}
constexpr Layout WithPartitions(Layout l, uint16_t count, uint16_t stats,
                                uint16_t stride) {
  l.num_partition = U16(count);
  l.xcp_offset = stats;
  l.xcp_stride = stride;
  return l;
}

// The 2.x APU tables; 2.0 has the timestamp right after the header.
constexpr Layout V2(uint8_t content, uint16_t size) {
  const uint16_t shift = content == 0 ? 12 : 0;
  Layout l = Base(2, content, size, Scale::kApuCenti);
  l.temp_edge = U16(4 + shift);  // temperature_gfx
  l.gfx_activity = U16(content == 0 ? 40 : 28);
  l.power = U16(content == 0 ? 44 : 40);
  l = Clocks(l, 76 + (content == 0 ? 4 : 0), 78 + (content == 0 ? 4 : 0),
             80 + (content == 0 ? 4 : 0), 84 + (content == 0 ? 4 : 0),
             86 + (content == 0 ? 4 : 0));
  if (content >= 2) l = WithThrottle(l, U64(120), Throttle::kIndependent);
  return l;
}

// 3.0 (APUs): only time-filtered averages; no decode clock.
constexpr Layout V3() {
  Layout l = Base(3, 0, 264, Scale::kApuV3);
  l.gfx_activity = U16(42);
  l.power = U32(112);
  l.gfxclk = U16(174);
  l.socclk = U16(176);
  l.vclk = U16(184);
  l.uclk = U16(186);
  return l;
}

constexpr Layout kLayouts[] = {
    V1Classic(0, 80, 16, 28, 34, U32(36), 54),
    V1Classic(1, 96, 4, 16, 22, U64(24), 54),
    V1Classic(2, 104, 4, 16, 22, U64(24), 54),
    WithThrottle(V1Classic(3, 120, 4, 16, 22, U64(24), 54), U64(112),
                 Throttle::kIndependent),
    WithThrottle(Mi300(4, 288, 24, 240), U32(40), Throttle::kSmu13_0_6),
    WithThrottle(Mi300(5, 360, 88, 312), U32(104), Throttle::kSmu13_0_6),
    // The first 1.6 (Linux 6.10 era, withdrawn in May 2024).
    WithResidency(
        WithThrottle(Mi300(6, 384, 88, 336), U32(128), Throttle::kSmu13_0_6),
        104),
    WithPartitions(WithResidency(Mi300(6, 1664, 16, 264), 32), 306, 312, 168),
    WithPartitions(WithResidency(Mi300(7, 2208, 24, 296), 40), 338, 344, 232),
    WithPartitions(WithResidency(Mi300(8, 3360, 24, 296), 40), 338, 344, 376),
    V2(0, 120),
    V2(1, 120),
    V2(2, 128),
    V2(3, 152),
    V2(4, 168),
    V3(),
};

constexpr bool FitsIn(Field f, uint16_t size) {
  return f.bytes == 0 || f.offset + f.bytes <= size;
}
constexpr bool LayoutsFit() {
  for (const Layout& l : kLayouts) {
    for (Field f : {l.temp_edge, l.temp_hotspot, l.temp_mem, l.power,
                    l.gfx_activity, l.umc_activity, l.energy, l.socclk, l.uclk,
                    l.vclk, l.dclk, l.throttle, l.num_partition}) {
      if (!FitsIn(f, l.size)) return false;
    }
    if (l.per_xcd_clocks && l.gfxclk.offset + 2 * kAmdMaxXcds > l.size) {
      return false;
    }
    if (l.residency.bytes != 0 && l.residency.offset + 24 > l.size) {
      return false;
    }
    if (l.xcp_stride != 0 &&
        l.xcp_offset + kAmdMaxPartitions * l.xcp_stride > l.size) {
      return false;
    }
  }
  return true;
}
static_assert(LayoutsFit(), "a gpu_metrics field lies outside its table");

// The field's value, nullopt when absent from the layout or all ones (the
// driver's "not supported").
std::optional<uint64_t> Load(const uint8_t* table, Field f) {
  switch (f.bytes) {
    case 2: {
      uint16_t v;
      std::memcpy(&v, table + f.offset, sizeof v);
      if (v == UINT16_MAX) return std::nullopt;
      return v;
    }
    case 4: {
      uint32_t v;
      std::memcpy(&v, table + f.offset, sizeof v);
      if (v == UINT32_MAX) return std::nullopt;
      return v;
    }
    case 8: {
      uint64_t v;
      std::memcpy(&v, table + f.offset, sizeof v);
      if (v == UINT64_MAX) return std::nullopt;
      return v;
    }
    default:
      return std::nullopt;
  }
}

std::optional<double> Scaled(std::optional<uint64_t> v, double factor) {
  if (!v) return std::nullopt;
  return static_cast<double>(*v) * factor;
}

// SMU 13.0.6 throttle_status bits (smu_v13_0_6_pmfw.h: PROCHOT 0, PPT 1,
// THERMAL_SOCKET 2, THERMAL_VR 3, THERMAL_HBM 4) to the independent bits,
// as smu_v13_0_6_throttler_map translates them.
uint64_t Smu13_0_6ToIndependent(uint32_t status) {
  constexpr int kMap[][2] = {{0, 47}, {1, 0}, {2, 32}, {3, 38}, {4, 34}};
  uint64_t out = 0;
  for (const auto& [dependent, independent] : kMap) {
    if (status & (1u << dependent)) out |= uint64_t{1} << independent;
  }
  return out;
}

const Layout* FindLayout(uint8_t format, uint8_t content, uint16_t size,
                         bool* revision_known) {
  const Layout* same_revision = nullptr;
  for (const Layout& l : kLayouts) {
    if (l.format != format || l.content != content) continue;
    if (l.size == size) {
      *revision_known = true;
      return &l;
    }
    same_revision = &l;
  }
  *revision_known = same_revision != nullptr;
  return same_revision;
}

void ReadInstances(const uint8_t* table, const Layout& l, AmdGpuMetrics* out) {
  const double mhz = 1e6;
  for (size_t i = 0; i < kAmdMaxXcds; ++i) {
    out->xcd_gfxclk_hz[i] = Scaled(
        Load(table, U16(static_cast<uint16_t>(l.gfxclk.offset + 2 * i))), mhz);
  }
  out->gfxclk_hz = out->xcd_gfxclk_hz[0];
}

void ReadPartitions(const uint8_t* table, const Layout& l, AmdGpuMetrics* out) {
  std::optional<uint64_t> count = Load(table, l.num_partition);
  if (!count || *count == 0 || *count > kAmdMaxPartitions) return;
  out->partitions = static_cast<int>(*count);
  for (size_t p = 0; p < *count; ++p) {
    for (size_t x = 0; x < kAmdMaxXcds; ++x) {
      const auto at =
          static_cast<uint16_t>(l.xcp_offset + p * l.xcp_stride + 4 * x);
      out->partition_xcd_activity_ratio[p][x] =
          Scaled(Load(table, U32(at)), 0.01);
    }
  }
}

void ReadResidency(const uint8_t* table, const Layout& l, AmdGpuMetrics* out) {
  if (l.residency.bytes == 0) return;
  uint32_t v[6];
  for (int i = 0; i < 6; ++i) {
    std::optional<uint64_t> value =
        Load(table, U32(static_cast<uint16_t>(l.residency.offset + 4 * i)));
    if (!value) return;
    v[i] = static_cast<uint32_t>(*value);
  }
  out->residency = AmdThrottleResidency{v[0], v[1], v[2], v[3], v[4], v[5]};
}

void ReadThrottle(const uint8_t* table, const Layout& l, AmdGpuMetrics* out) {
  std::optional<uint64_t> status = Load(table, l.throttle);
  if (!status) return;
  switch (l.throttle_kind) {
    case Throttle::kIndependent:
      out->indep_throttle_status = *status;
      break;
    case Throttle::kSmu13_0_6:
      out->indep_throttle_status =
          Smu13_0_6ToIndependent(static_cast<uint32_t>(*status));
      break;
    case Throttle::kNone:
      break;
  }
}

void Decode(const uint8_t* t, const Layout& l, AmdGpuMetrics* out) {
  double degrees = 1, watts = 1, activity = 0.01;
  if (l.scale != Scale::kDgpu) {
    degrees = 0.01;
    watts = 0.001;
    activity = l.scale == Scale::kApuCenti ? 0.0001 : 0.01;
  }
  out->temperature_edge_celsius = Scaled(Load(t, l.temp_edge), degrees);
  out->temperature_hotspot_celsius = Scaled(Load(t, l.temp_hotspot), degrees);
  out->temperature_mem_celsius = Scaled(Load(t, l.temp_mem), degrees);
  out->power_watts = Scaled(Load(t, l.power), watts);
  out->gfx_activity_ratio = Scaled(Load(t, l.gfx_activity), activity);
  out->umc_activity_ratio = Scaled(Load(t, l.umc_activity), activity);
  // 15.259 uJ (2^-16 J) per count, as the 1.4+ tables document; rocm_smi_lib
  // applies the same resolution to the older tables' counter.
  out->energy_joules = Scaled(Load(t, l.energy), 1.0 / 65536.0);
  if (l.per_xcd_clocks) {
    ReadInstances(t, l, out);
  } else {
    out->gfxclk_hz = Scaled(Load(t, l.gfxclk), 1e6);
  }
  out->socclk_hz = Scaled(Load(t, l.socclk), 1e6);
  out->uclk_hz = Scaled(Load(t, l.uclk), 1e6);
  out->vclk_hz = Scaled(Load(t, l.vclk), 1e6);
  out->dclk_hz = Scaled(Load(t, l.dclk), 1e6);
  ReadThrottle(t, l, out);
  ReadResidency(t, l, out);
  if (l.xcp_stride != 0) ReadPartitions(t, l, out);
}

std::string Revision(uint8_t format, uint8_t content) {
  return std::to_string(format) + "." + std::to_string(content);
}

}  // namespace

Status ParseAmdGpuMetrics(std::span<const uint8_t> blob, AmdGpuMetrics* out) {
  *out = AmdGpuMetrics{};
  if (blob.size() < 4) {
    return InvalidArgumentError("gpu_metrics: " + std::to_string(blob.size()) +
                                " bytes, shorter than its 4-byte header");
  }
  uint16_t size;
  std::memcpy(&size, blob.data(), sizeof size);
  const uint8_t format = blob[2];
  const uint8_t content = blob[3];
  bool known = false;
  const Layout* layout = FindLayout(format, content, size, &known);
  if (!known) {
    return UnimplementedError("gpu_metrics: format " +
                              Revision(format, content) + " is not supported");
  }
  if (layout->size != size) {
    return InvalidArgumentError("gpu_metrics " + Revision(format, content) +
                                ": header says " + std::to_string(size) +
                                " bytes, the layout of that revision has " +
                                std::to_string(layout->size));
  }
  if (blob.size() < size) {
    return InvalidArgumentError("gpu_metrics " + Revision(format, content) +
                                ": truncated, " + std::to_string(blob.size()) +
                                " of " + std::to_string(size) + " bytes");
  }
  out->format_revision = format;
  out->content_revision = content;
  Decode(blob.data(), *layout, out);
  return OkStatus();
}

}  // namespace lens
