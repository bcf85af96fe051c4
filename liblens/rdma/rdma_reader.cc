// RdmaReader: Scan reads the inventory and opens every counter file once;
// Sample only preads those kept-open files (no path lookups, no directory
// listing, no allocation once `out` has its steady-state shape), the slow
// counters only every slow_counter_stride-th sample of a port.
#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/kernel_file.h"
#include "lens/rdma.h"
#include "rdma/rdma_sysfs.h"

namespace lens {
namespace {

// hw_counters/lifespan is the driver's cache time for the other files in
// milliseconds (writable), not a counter.
constexpr std::string_view kLifespan = "lifespan";

struct CounterFile {
  std::string name;
  bool hardware = false;
  bool traffic = false;  // read on every sample
  KernelFile file;
};

// Read on every sample: the counters behind the traffic metrics.
bool IsTrafficCounter(std::string_view name) {
  return name == "port_xmit_data" || name == "port_rcv_data" ||
         name == "port_xmit_packets" || name == "port_rcv_packets";
}

// Everything Sample needs for one port, opened by Scan.
struct PortFiles {
  std::string device;
  int port = 0;
  std::vector<CounterFile> counters;  // counters/ then hw_counters/, sorted
  // Indexes into `counters` of the four traffic counters; -1 when absent.
  int xmit_data = -1;
  int rcv_data = -1;
  int xmit_packets = -1;
  int rcv_packets = -1;
  KernelFile state;  // not open when the file is missing
  KernelFile phys_state;
  // Samples of this port so far, offset to stagger the ports: the slow
  // counters are read when it is a multiple of the stride, and on the first
  // sample after Scan (`fresh`). Each port is sampled by one thread at a time.
  uint64_t samples = 0;
  bool fresh = true;
};

// Opens the counter files of `dir` (counters/ or hw_counters/). A missing
// directory has no counters; a file that cannot be opened is skipped.
Status OpenCounterDir(const std::string& dir, bool hardware, PortFiles* port) {
  StatusOr<std::vector<std::string>> names = ListKernelDir(dir);
  if (!names.ok()) {
    if (names.status().code() == StatusCode::kNotFound) return OkStatus();
    return names.status();
  }
  for (std::string& name : *names) {
    if (hardware && name == kLifespan) continue;
    StatusOr<KernelFile> file = KernelFile::Open(dir + "/" + name);
    if (!file.ok()) continue;  // e.g. mode 0200: not readable
    int index = static_cast<int>(port->counters.size());
    if (!hardware) {
      if (name == "port_xmit_data") port->xmit_data = index;
      if (name == "port_rcv_data") port->rcv_data = index;
      if (name == "port_xmit_packets") port->xmit_packets = index;
      if (name == "port_rcv_packets") port->rcv_packets = index;
    }
    const bool traffic = !hardware && IsTrafficCounter(name);
    port->counters.push_back(
        {std::move(name), hardware, traffic, *std::move(file)});
  }
  return OkStatus();
}

KernelFile OpenIfPresent(const std::string& path) {
  StatusOr<KernelFile> file = KernelFile::Open(path);
  return file.ok() ? *std::move(file) : KernelFile();
}

StatusOr<PortFiles> OpenPortFiles(const std::string& port_dir,
                                  const std::string& device, int port) {
  PortFiles files;
  files.device = device;
  files.port = port;
  LENS_RETURN_IF_ERROR(OpenCounterDir(port_dir + "/counters", false, &files));
  LENS_RETURN_IF_ERROR(OpenCounterDir(port_dir + "/hw_counters", true, &files));
  files.state = OpenIfPresent(port_dir + "/state");
  files.phys_state = OpenIfPresent(port_dir + "/phys_state");
  return files;
}

// What one Sample managed to read, for its final verdict.
struct SampleTally {
  size_t reads_ok = 0;
  Status first_error;
  void Fail(const Status& status) {
    if (first_error.ok()) first_error = status;
  }
};

// Re-reads an enum file ("4: ACTIVE") into `out` without its prefix; `out`
// is cleared when the file is missing or unreadable.
void ReadEnum(const KernelFile& file, std::string* buffer, std::string* out,
              SampleTally* tally) {
  if (!file.is_open()) {
    out->clear();
    return;
  }
  StatusOr<std::string_view> text = file.Read(buffer);
  if (!text.ok() || text->empty()) {
    tally->Fail(text.ok() ? UnavailableError(file.path() + ": empty")
                          : text.status());
    out->clear();
    return;
  }
  ++tally->reads_ok;
  out->assign(rdma::StripEnumPrefix(*text));
}

// Whether counters[n] is `file`'s entry. `counters` holds a subsequence of
// the port's files, in their order (those read successfully last time).
bool HasEntry(const std::vector<RdmaCounter>& counters, size_t n,
              const CounterFile& file) {
  return n < counters.size() && counters[n].hardware == file.hardware &&
         counters[n].name == file.name;
}

void SamplePort(PortFiles& port, int stride,
                std::chrono::system_clock::time_point now, std::string* buffer,
                RdmaPortCounters* out, SampleTally* tally) {
  const bool same_port = out->device == port.device && out->port == port.port;
  const bool read_slow = stride <= 1 || !same_port || port.fresh ||
                         port.samples % static_cast<uint64_t>(stride) == 0;
  if (!same_port || port.fresh) out->counters.clear();
  port.fresh = false;
  ++port.samples;
  out->device.assign(port.device);
  out->port = port.port;
  out->time = now;
  out->tx_bytes.reset();
  out->rx_bytes.reset();
  out->tx_packets.reset();
  out->rx_packets.reset();
  std::vector<RdmaCounter>& counters = out->counters;
  size_t n = 0;
  for (size_t i = 0; i < port.counters.size(); ++i) {
    const CounterFile& file = port.counters[i];
    const int index = static_cast<int>(i);
    const bool has_entry = HasEntry(counters, n, file);
    if (!read_slow && !file.traffic) {  // not due: keep the last value
      if (has_entry) ++n;
      continue;
    }
    StatusOr<uint64_t> value = file.file.ReadUint64();
    if (!value.ok()) {  // unreadable or not a number: left out, never 0
      tally->Fail(value.status());
      if (has_entry) {
        counters.erase(counters.begin() + static_cast<std::ptrdiff_t>(n));
      }
      continue;
    }
    ++tally->reads_ok;
    if (!has_entry) {
      auto at = counters.insert(
          counters.begin() + static_cast<std::ptrdiff_t>(n), RdmaCounter{});
      at->name.assign(file.name);
      at->hardware = file.hardware;
    }
    counters[n++].value = *value;
    // port_xmit_data / port_rcv_data count 4-octet words.
    if (index == port.xmit_data) out->tx_bytes = *value * 4;
    if (index == port.rcv_data) out->rx_bytes = *value * 4;
    if (index == port.xmit_packets) out->tx_packets = *value;
    if (index == port.rcv_packets) out->rx_packets = *value;
  }
  counters.resize(n);
  ReadEnum(port.state, buffer, &out->state, tally);
  ReadEnum(port.phys_state, buffer, &out->phys_state, tally);
}

}  // namespace

struct RdmaReader::Impl {
  std::string class_dir;  // <sysfs>/class/infiniband
  int slow_counter_stride = 1;
  bool scanned = false;
  std::vector<PortFiles> ports;  // Scan order: devices, then their ports
};

RdmaReader::RdmaReader(HostRoots roots)
    : RdmaReader(std::move(roots), RdmaReaderOptions{}) {}

RdmaReader::RdmaReader(HostRoots roots, RdmaReaderOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->class_dir = roots.sysfs + "/class/infiniband";
  impl_->slow_counter_stride = std::max(1, options.slow_counter_stride);
}

RdmaReader::~RdmaReader() = default;

StatusOr<std::vector<RdmaDevice>> RdmaReader::Scan() {
  // A failed Scan leaves no files of the previous one behind.
  impl_->scanned = false;
  impl_->ports.clear();
  std::vector<RdmaDevice> devices;
  StatusOr<std::vector<std::string>> names = ListKernelDir(impl_->class_dir);
  if (!names.ok()) {
    if (names.status().code() != StatusCode::kNotFound) return names.status();
    impl_->scanned = true;  // no RDMA stack loaded: nothing to report
    return devices;
  }
  std::vector<PortFiles> ports;
  for (const std::string& name : *names) {
    const std::string dir = impl_->class_dir + "/" + name;
    LENS_ASSIGN_OR_RETURN(RdmaDevice device, rdma::ReadRdmaDevice(dir, name));
    for (const RdmaPort& port : device.ports) {
      LENS_ASSIGN_OR_RETURN(
          PortFiles files,
          OpenPortFiles(dir + "/ports/" + std::to_string(port.port), name,
                        port.port));
      files.samples = ports.size();  // staggers the slow counters
      ports.push_back(std::move(files));
    }
    devices.push_back(std::move(device));
  }
  impl_->ports = std::move(ports);
  impl_->scanned = true;
  return devices;
}

Status RdmaReader::Sample(std::vector<RdmaPortCounters>* out) {
  if (impl_->scanned) out->resize(impl_->ports.size());
  return SamplePorts(0, impl_->ports.size(), out);
}

size_t RdmaReader::port_count() const { return impl_->ports.size(); }

Status RdmaReader::SamplePorts(size_t begin, size_t end,
                               std::vector<RdmaPortCounters>* out) {
  if (!impl_->scanned) {
    return FailedPreconditionError(
        "RdmaReader::Sample: no successful Scan to sample");
  }
  if (begin > end || end > impl_->ports.size() ||
      out->size() != impl_->ports.size()) {
    return InvalidArgumentError("RdmaReader::SamplePorts: range [" +
                                std::to_string(begin) + ", " +
                                std::to_string(end) + ") or output size " +
                                std::to_string(out->size()) + " does not fit " +
                                std::to_string(impl_->ports.size()) + " ports");
  }
  const auto now = std::chrono::system_clock::now();
  // One scratch buffer per thread: ranges may be sampled concurrently.
  thread_local std::string buffer;
  SampleTally tally;
  for (size_t i = begin; i < end; ++i) {
    SamplePort(impl_->ports[i], impl_->slow_counter_stride, now, &buffer,
               &(*out)[i], &tally);
  }
  if (begin < end && tally.reads_ok == 0 && !tally.first_error.ok()) {
    return UnavailableError("sample " + impl_->class_dir +
                            ": no RDMA port file could be read; first error: " +
                            tally.first_error.message());
  }
  return OkStatus();
}

StatusOr<std::string> RdmaReader::DeviceSetToken() const {
  StatusOr<std::vector<std::string>> names = ListKernelDir(impl_->class_dir);
  if (!names.ok()) {
    if (names.status().code() == StatusCode::kNotFound) return std::string();
    return names.status();
  }
  std::string token;
  for (const std::string& name : *names) {
    if (!token.empty()) token += ',';
    token += name;
  }
  return token;
}

StatusOr<std::vector<RdmaProbe>> ProbeRdma(const HostRoots& roots) {
  RdmaReader reader(roots);
  LENS_ASSIGN_OR_RETURN(std::vector<RdmaDevice> devices, reader.Scan());
  std::vector<RdmaPortCounters> samples;
  LENS_RETURN_IF_ERROR(reader.Sample(&samples));
  std::vector<RdmaProbe> probes;
  size_t next = 0;
  for (RdmaDevice& device : devices) {
    RdmaProbe probe;
    for (size_t p = 0; p < device.ports.size() && next < samples.size(); ++p) {
      probe.ports.push_back(std::move(samples[next++]));
    }
    probe.device = std::move(device);
    probes.push_back(std::move(probe));
  }
  return probes;
}

}  // namespace lens
