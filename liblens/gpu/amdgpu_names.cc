// Marketing names of AMD GPUs by PCI device id and revision. The entries
// follow libdrm's data/amdgpu.ids ("device_id, revision_id, product_name";
// the copy checked was X11Libre/drm @ 7d43d9b6, 2025-08-11) for the
// Instinct accelerators and the Radeon (PRO) boards seen in GPU clusters;
// the chip names in pci.ids ("Aqua Vanjaram [Instinct MI300X]") agree.
// amdgpu itself names a board only through product_name (from the FRU
// EEPROM of server boards), which is preferred when present.
#include <array>
#include <cstdio>

#include "gpu/amdgpu_sysfs.h"

namespace lens {
namespace {

struct MarketingName {
  uint16_t device_id;
  uint8_t revision;
  std::string_view name;
};

constexpr std::array kMarketingNames = {
    // Instinct (CDNA).
    MarketingName{0x738c, 0x01, "AMD Instinct MI100"},
    MarketingName{0x7408, 0x00, "AMD Instinct MI250X"},
    MarketingName{0x740c, 0x01, "AMD Instinct MI250X / MI250"},
    MarketingName{0x740f, 0x02, "AMD Instinct MI210"},
    MarketingName{0x74a0, 0x00, "AMD Instinct MI300A"},
    MarketingName{0x74a1, 0x00, "AMD Instinct MI300X"},
    MarketingName{0x74a2, 0x00, "AMD Instinct MI308X"},
    MarketingName{0x74a5, 0x00, "AMD Instinct MI325X"},
    MarketingName{0x74a9, 0x00, "AMD Instinct MI300X HF"},
    MarketingName{0x74b5, 0x00, "AMD Instinct MI300X VF"},
    MarketingName{0x74bd, 0x00, "AMD Instinct MI300X HF"},
    // Radeon PRO (workstation).
    MarketingName{0x73a3, 0x00, "AMD Radeon Pro W6800"},
    MarketingName{0x73e3, 0x00, "AMD Radeon Pro W6600"},
    MarketingName{0x7448, 0x00, "AMD Radeon Pro W7900"},
    MarketingName{0x7449, 0x00, "AMD Radeon Pro W7800 48GB"},
    MarketingName{0x744a, 0x00, "AMD Radeon Pro W7900 Dual Slot"},
    MarketingName{0x7470, 0x00, "AMD Radeon Pro W7700"},
    MarketingName{0x7460, 0x00, "AMD Radeon Pro V710"},
    // Radeon (desktop); one device id covers several boards by revision.
    MarketingName{0x73af, 0xc0, "AMD Radeon RX 6900 XT"},
    MarketingName{0x73bf, 0xc0, "AMD Radeon RX 6900 XT"},
    MarketingName{0x73bf, 0xc1, "AMD Radeon RX 6800 XT"},
    MarketingName{0x73bf, 0xc3, "AMD Radeon RX 6800"},
    MarketingName{0x73a5, 0xc0, "AMD Radeon RX 6950 XT"},
    MarketingName{0x73df, 0xc0, "AMD Radeon RX 6750 XT"},
    MarketingName{0x73df, 0xc1, "AMD Radeon RX 6700 XT"},
    MarketingName{0x744c, 0xc8, "AMD Radeon RX 7900 XTX"},
    MarketingName{0x744c, 0xcc, "AMD Radeon RX 7900 XT"},
    MarketingName{0x744c, 0xce, "AMD Radeon RX 7900 GRE"},
};

}  // namespace

std::optional<std::string_view> LookupAmdGpuMarketingName(uint16_t device_id,
                                                          uint8_t revision) {
  std::optional<std::string_view> only_name;
  bool names_differ = false;
  for (const MarketingName& entry : kMarketingNames) {
    if (entry.device_id != device_id) continue;
    if (entry.revision == revision) return entry.name;
    if (only_name && *only_name != entry.name) names_differ = true;
    only_name = entry.name;
  }
  if (names_differ) return std::nullopt;
  return only_name;
}

std::string AmdGpuModel(std::string_view product_name, uint16_t device_id,
                        uint8_t revision) {
  product_name = TrimKernelValue(product_name);
  if (!product_name.empty()) return std::string(product_name);
  if (std::optional<std::string_view> name =
          LookupAmdGpuMarketingName(device_id, revision)) {
    return std::string(*name);
  }
  char fallback[32];
  std::snprintf(fallback, sizeof fallback, "AMD GPU 0x%04x", device_id);
  return fallback;
}

}  // namespace lens
