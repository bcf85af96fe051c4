#include "gpu/nvml/nvml_source.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "gpu/nvml/nvml_library.h"
#include "gpu/nvml/nvml_mig.h"
#include "gpu/nvml/nvml_processes.h"
#include "lens/log.h"

namespace lens {
namespace nvml {
namespace {

constexpr double kMega = 1e6;

// Collects one device's values: a value that is read counts, a NotFound is
// "not reported", any other failure is remembered (the first one) in case
// nothing at all can be read.
class Reader {
 public:
  template <typename T, typename Assign>
  void Take(StatusOr<T> value, Assign&& assign) {
    if (value.ok()) {
      assign(*std::move(value));
      ++read_;
    } else {
      Note(value.status());
    }
  }
  // A failure met elsewhere; OK and NotFound are not failures.
  void Note(const Status& status) {
    if (!status.ok() && status.code() != StatusCode::kNotFound &&
        first_error_.ok()) {
      first_error_ = status;
    }
  }
  int read() const { return read_; }
  const Status& first_error() const { return first_error_; }

 private:
  int read_ = 0;
  Status first_error_;
};

class NvmlGpuSource final : public GpuSource {
 public:
  NvmlGpuSource(std::shared_ptr<NvmlApi> api, NvmlSourceOptions options)
      : api_(std::move(api)), names_(std::move(options.procfs)) {}
  ~NvmlGpuSource() override { (void)api_->Shutdown(); }

  std::string_view name() const override { return "nvml"; }
  StatusOr<std::vector<GpuInfo>> Scan() override;
  Status Sample(std::vector<GpuSample>* samples) override;
  StatusOr<std::string> DeviceSetToken() override;

 private:
  // Also the GPU's MIG device handles into `migs`.
  StatusOr<GpuInfo> ReadInfo(NvmlDevice device, const std::string& driver,
                             std::vector<NvmlDevice>* migs);
  // Load, power, temperatures, clocks, fan.
  GpuSample ReadSample(NvmlDevice device, Reader* reader);
  // PCIe link, ECC, clock event reasons, processes into `sample`.
  void ReadHealth(NvmlDevice device, Reader* reader, GpuSample* sample);

  // Processes with their names into `sample`.
  void ReadProcesses(NvmlDevice device, Reader* reader, GpuSample* sample);

  std::shared_ptr<NvmlApi> api_;
  NvmlProcessNames names_;
  std::vector<NvmlDevice> devices_;  // of the last Scan, in GpuInfo order
  // MIG device handles per GPU of the last Scan (GpuInfo::mig_devices).
  std::vector<std::vector<NvmlDevice>> mig_handles_;
};

StatusOr<GpuInfo> NvmlGpuSource::ReadInfo(NvmlDevice device,
                                          const std::string& driver,
                                          std::vector<NvmlDevice>* migs) {
  LENS_ASSIGN_OR_RETURN(NvmlPciInfo pci, api_->PciInfo(device));
  GpuInfo info;
  info.vendor = GpuVendor::kNvidia;
  info.bdf = pci.bdf;
  info.pci_vendor_id = static_cast<uint16_t>(pci.pci_device_id & 0xffff);
  info.pci_device_id = static_cast<uint16_t>(pci.pci_device_id >> 16);
  info.pci_subsystem_vendor_id =
      static_cast<uint16_t>(pci.pci_subsystem_id & 0xffff);
  info.pci_subsystem_device_id =
      static_cast<uint16_t>(pci.pci_subsystem_id >> 16);
  info.driver = "nvidia";
  info.driver_version = driver;
  Reader r;
  r.Take(api_->Name(device), [&](std::string v) { info.model = std::move(v); });
  if (info.model.empty()) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "NVIDIA GPU 0x%04x", info.pci_device_id);
    info.model = buf;
  }
  r.Take(api_->Serial(device), [&](std::string v) { info.serial = v; });
  r.Take(api_->Uuid(device), [&](std::string v) { info.unique_id = v; });
  r.Take(api_->VbiosVersion(device),
         [&](std::string v) { info.vbios_version = v; });
  r.Take(api_->Memory(device),
         [&](NvmlMemory m) { info.vram_total_bytes = m.total_bytes; });
  r.Take(api_->PcieLinkGeneration(device, NvmlPcieLink::kMax),
         [&](unsigned gen) {
           info.pcie_max_speed_gtps = PcieGenerationGtps(gen);
         });
  r.Take(api_->PcieLinkWidth(device, NvmlPcieLink::kMax), [&](unsigned width) {
    info.pcie_max_width = static_cast<int>(width);
  });
  r.Take(api_->EnforcedPowerLimitMilliwatts(device),
         [&](unsigned mw) { info.power_cap_watts = mw / 1000.0; });
  r.Take(api_->MinorNumber(device),
         [&](unsigned minor) { info.nvidia_minor = static_cast<int>(minor); });
  MigScan mig =
      ReadMigDevices(*api_, device, info.vram_total_bytes.value_or(0));
  info.mig_enabled = mig.enabled;
  info.mig_devices = std::move(mig.devices);
  *migs = std::move(mig.handles);
  r.Note(mig.first_error);
  if (!r.first_error().ok()) {
    LENS_LOG(WARN).Field("bdf", info.bdf).Field("error", r.first_error())
        << "nvml: GPU inventory incomplete";
  }
  return info;
}

StatusOr<std::vector<GpuInfo>> NvmlGpuSource::Scan() {
  StatusOr<unsigned> count = api_->DeviceCount();
  if (!count.ok()) {
    return UnavailableError("nvml: " + count.status().ToString());
  }
  StatusOr<std::string> driver = api_->DriverVersion();
  const std::string driver_version = driver.ok() ? *driver : "";
  struct Found {
    GpuInfo info;
    NvmlDevice handle;
    std::vector<NvmlDevice> migs;
  };
  std::vector<Found> found;
  for (unsigned i = 0; i < *count; ++i) {
    StatusOr<NvmlDevice> device = api_->DeviceByIndex(i);
    std::vector<NvmlDevice> migs;
    StatusOr<GpuInfo> info = device.ok()
                                 ? ReadInfo(*device, driver_version, &migs)
                                 : device.status();
    if (!info.ok()) {
      LENS_LOG(WARN)
              .Field("index", static_cast<int64_t>(i))
              .Field("error", info.status())
          << "nvml: leaving out a GPU that cannot be identified";
      continue;
    }
    found.push_back({*std::move(info), *device, std::move(migs)});
  }
  std::stable_sort(
      found.begin(), found.end(),
      [](const Found& a, const Found& b) { return a.info.bdf < b.info.bdf; });
  std::vector<GpuInfo> infos;
  devices_.clear();
  mig_handles_.clear();
  for (Found& f : found) {
    f.info.index = static_cast<int>(infos.size());
    devices_.push_back(f.handle);
    mig_handles_.push_back(std::move(f.migs));
    infos.push_back(std::move(f.info));
  }
  return infos;
}

GpuSample NvmlGpuSource::ReadSample(NvmlDevice d, Reader* r) {
  GpuSample s;
  r->Take(api_->Utilization(d), [&](NvmlUtilization u) {
    s.utilization_ratio = u.gpu_percent / 100.0;
    s.memory_utilization_ratio = u.memory_percent / 100.0;
  });
  r->Take(api_->Memory(d), [&](NvmlMemory m) {
    s.vram_used_bytes = m.used_bytes;
    s.vram_total_bytes = m.total_bytes;
  });
  r->Take(api_->PowerUsageMilliwatts(d),
          [&](unsigned mw) { s.power_watts = mw / 1000.0; });
  r->Take(api_->TotalEnergyMillijoules(d),
          [&](uint64_t mj) { s.energy_joules = mj / 1000.0; });
  r->Take(api_->TemperatureCelsius(d, NvmlSensor::kGpu),
          [&](int c) { s.temperature_edge_celsius = c; });
  // Boards without a memory sensor (GDDR Ada parts) answer the field with
  // 0 rather than NOT_SUPPORTED (dcgm-exporter shows DCGM_FI_DEV_MEMORY_TEMP
  // 0 on an RTX 4000 Ada where nvidia-smi prints N/A): 0 is "not reported".
  r->Take(api_->TemperatureCelsius(d, NvmlSensor::kMemory), [&](int c) {
    if (c != 0) s.temperature_memory_celsius = c;
  });
  // The SM clock is the shader clock: the fallback where the graphics
  // domain is not reported.
  StatusOr<unsigned> graphics = api_->ClockMhz(d, NvmlClock::kGraphics);
  r->Take(
      graphics.ok() ? std::move(graphics) : api_->ClockMhz(d, NvmlClock::kSm),
      [&](unsigned mhz) { s.clock_graphics_hz = mhz * kMega; });
  r->Take(api_->ClockMhz(d, NvmlClock::kMemory),
          [&](unsigned mhz) { s.clock_memory_hz = mhz * kMega; });
  r->Take(api_->FanSpeedPercent(d),
          [&](unsigned pct) { s.fan_speed_ratio = pct / 100.0; });
  ReadHealth(d, r, &s);
  return s;
}

void NvmlGpuSource::ReadHealth(NvmlDevice d, Reader* r, GpuSample* sample) {
  GpuSample& s = *sample;
  r->Take(
      api_->PcieLinkGeneration(d, NvmlPcieLink::kCurrent),
      [&](unsigned gen) { s.pcie_link_speed_gtps = PcieGenerationGtps(gen); });
  r->Take(api_->PcieLinkWidth(d, NvmlPcieLink::kCurrent),
          [&](unsigned width) { s.pcie_link_width = static_cast<int>(width); });
  r->Take(api_->PcieReplayCount(d),
          [&](unsigned n) { s.pcie_replay_count = n; });
  // Volatile counts: since the driver loaded, as gpu.h defines the totals.
  r->Take(api_->EccErrors(d, NvmlEccCounter::kVolatile), [&](NvmlEccCounts e) {
    s.ecc_correctable_errors = e.corrected;
    s.ecc_uncorrectable_errors = e.uncorrected;
  });
  r->Take(api_->ClocksEventReasons(d), [&](uint64_t mask) {
    s.throttle_reasons = ClocksEventReasonNames(mask);
    s.throttle_known = true;
  });
  r->Take(api_->EccErrors(d, NvmlEccCounter::kAggregate), [&](NvmlEccCounts e) {
    s.ecc_correctable_errors_lifetime = e.corrected;
    s.ecc_uncorrectable_errors_lifetime = e.uncorrected;
  });
  ReadProcesses(d, r, &s);
}

void NvmlGpuSource::ReadProcesses(NvmlDevice d, Reader* r, GpuSample* s) {
  r->Take(api_->ComputeProcesses(d), [&](std::vector<NvmlProcess> list) {
    for (const NvmlProcess& p : list) {
      s->processes.push_back(GpuProcess{p.pid, names_.Name(p.pid),
                                        p.used_memory_bytes, p.gpu_instance_id,
                                        p.compute_instance_id});
    }
    s->processes_known = true;
  });
}

Status NvmlGpuSource::Sample(std::vector<GpuSample>* samples) {
  samples->assign(devices_.size(), GpuSample{});
  const auto now = std::chrono::system_clock::now();
  Reader reader;
  names_.BeginCycle();
  for (size_t i = 0; i < devices_.size(); ++i) {
    GpuSample& s = (*samples)[i];
    s = ReadSample(devices_[i], &reader);
    s.time = now;
    for (NvmlDevice mig : mig_handles_[i]) {
      StatusOr<NvmlMemory> m = api_->Memory(mig);
      s.mig_memory_used_bytes.push_back(
          m.ok() ? std::optional<uint64_t>(m->used_bytes) : std::nullopt);
    }
  }
  if (devices_.empty() || reader.read() > 0) return OkStatus();
  return UnavailableError("nvml: no value could be read from any GPU: " +
                          reader.first_error().ToString());
}

StatusOr<std::string> NvmlGpuSource::DeviceSetToken() {
  StatusOr<unsigned> count = api_->DeviceCount();
  if (!count.ok()) {
    return UnavailableError("nvml: " + count.status().ToString());
  }
  std::string token = std::to_string(*count);
  for (unsigned i = 0; i < *count; ++i) {
    StatusOr<NvmlDevice> device = api_->DeviceByIndex(i);
    StatusOr<std::string> uuid =
        device.ok() ? api_->Uuid(*device) : device.status();
    token += '|';
    token += uuid.ok() ? *uuid : "?";
    if (device.ok()) token += MigLayoutToken(*api_, *device);
  }
  return token;
}

}  // namespace

StatusOr<std::unique_ptr<GpuSource>> NewNvmlGpuSourceFromApi(
    std::shared_ptr<NvmlApi> api, NvmlSourceOptions options) {
  Status init = api->Init();
  if (!init.ok()) {
    return UnavailableError("nvmlInit failed: " + init.message());
  }
  return std::unique_ptr<GpuSource>(
      new NvmlGpuSource(std::move(api), std::move(options)));
}

}  // namespace nvml

StatusOr<std::unique_ptr<GpuSource>> NewNvmlGpuSource() {
  LENS_ASSIGN_OR_RETURN(std::unique_ptr<nvml::NvmlApi> library,
                        nvml::OpenNvmlLibrary());
  return nvml::NewNvmlGpuSourceFromApi(std::move(library));
}

}  // namespace lens
