// RDMA (InfiniBand / RoCE) devices, ports and counters from sysfs
// (class/infiniband/<device>).
//
//   lens::RdmaReader reader(lens::HostRoots{});
//   auto devices = reader.Scan();        // inventory + open counter files
//   std::vector<lens::RdmaPortCounters> counters;
//   lens::Status st = reader.Sample(&counters);  // one per port, Scan order
//
// Counters are monotonic totals as the kernel keeps them (they can reset when
// the driver reloads). port_xmit_data and port_rcv_data count units of 4
// octets; Lens reports them in bytes (tx_bytes, rx_bytes). hw_counters hold
// driver-specific counters (mlx5, bnxt_re, ionic), reported by file name.
#ifndef LENS_RDMA_H_
#define LENS_RDMA_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lens/export.h"
#include "lens/host.h"
#include "lens/status.h"

namespace lens {

// One counter file's value.
struct LENS_EXPORT RdmaCounter {
  std::string name;       // file name: "port_rcv_packets", "out_of_buffer"
  bool hardware = false;  // from hw_counters/ (driver-specific)
  uint64_t value = 0;
  bool operator==(const RdmaCounter&) const = default;
};

// Dynamic values of one port. Plain value.
struct LENS_EXPORT RdmaPortCounters {
  std::string device;  // "mlx5_0"
  int port = 0;
  std::chrono::system_clock::time_point time;
  std::optional<uint64_t> tx_bytes;  // port_xmit_data * 4
  std::optional<uint64_t> rx_bytes;  // port_rcv_data * 4
  std::optional<uint64_t> tx_packets;
  std::optional<uint64_t> rx_packets;
  // Every readable counter, counters/ first then hw_counters/, each sorted by
  // name (raw values: port_xmit_data stays in 4-octet units here).
  std::vector<RdmaCounter> counters;
  // Port state re-read each sample (links go down at run time).
  std::string state;       // "ACTIVE", "DOWN", "INIT", "ARMED"
  std::string phys_state;  // "LinkUp", "Disabled", "Polling", ...
  bool operator==(const RdmaPortCounters&) const = default;
};

// Static facts about one port. Plain value.
struct LENS_EXPORT RdmaPort {
  int port = 0;
  std::string state;       // "ACTIVE" (the "4: " prefix removed)
  std::string phys_state;  // "LinkUp"
  std::string link_layer;  // "InfiniBand" or "Ethernet"
  std::string rate;        // as the kernel prints it: "400 Gb/sec (4X NDR)"
  std::optional<double> rate_gbps;  // 400
  std::optional<uint32_t> lid;      // InfiniBand only; 0 on RoCE
  // Network interfaces of this port: on RoCE the netdevs named by the port's
  // GID table (ports/<n>/gid_attrs/ndevs/*, in GID-index order: the port's
  // own interface first, then VLAN/macvlan children); otherwise (InfiniBand
  // with IPoIB, or kernels without gid_attrs) the device's netdevs
  // (device/net/*) whose dev_port (else dev_id) is port - 1, sorted. Empty
  // when the port has none.
  std::vector<std::string> netdevs;
  bool operator==(const RdmaPort&) const = default;
};

// Static facts about one RDMA device. Plain value.
struct LENS_EXPORT RdmaDevice {
  std::string name;       // "mlx5_0"
  std::string node_guid;  // "b8ce:f603:00a1:2b3c"
  std::string sys_image_guid;
  std::string fw_version;            // fw_ver
  std::string board_id;              // "MT_0000000838"
  std::string hca_type;              // "MT4129"
  std::string node_type;             // "CA" (the "1: " prefix removed)
  std::vector<std::string> netdevs;  // from device/net/*, sorted (all ports)
  std::string bdf;                   // PCI address of the function
  std::optional<int> numa_node;
  std::vector<RdmaPort> ports;
  bool operator==(const RdmaDevice&) const = default;
};

// How often Sample reads each kind of port file.
struct LENS_EXPORT RdmaReaderOptions {
  // The traffic counters (port_{xmit,rcv}_{data,packets}) and the port state
  // are read on every Sample. The other counters/ files and hw_counters/
  // (error and event counters, which move slowly and, on real HCAs, cost a
  // firmware command each) are read every `slow_counter_stride`-th Sample
  // per port, the ports staggered so that each Sample reads about the same
  // number of files. Between reads a port keeps the values it had in `out`
  // (Sample's output must be passed back unchanged, or copied from the
  // previous sample, for them to carry over). 1: every file every Sample.
  int slow_counter_stride = 1;
};

// Reads class/infiniband under a sysfs root. Not thread-safe: one caller.
class LENS_EXPORT RdmaReader {
 public:
  explicit RdmaReader(HostRoots roots);
  // `options.slow_counter_stride` below 1 is taken as 1.
  RdmaReader(HostRoots roots, RdmaReaderOptions options);
  ~RdmaReader();
  RdmaReader(const RdmaReader&) = delete;
  RdmaReader& operator=(const RdmaReader&) = delete;

  // Reads every device and port and opens their counter files. An empty list
  // means no RDMA device (no class/infiniband): not an error. Errors name the
  // file that could not be read or parsed.
  StatusOr<std::vector<RdmaDevice>> Scan();
  // Reads the ports of the last Scan into `out` (resized; one entry per port,
  // devices in Scan order): every counter, or, with a slow_counter_stride
  // above 1, the traffic counters and the slow ones that are due. A counter
  // that cannot be read this time is left out; fails only when nothing could
  // be read. Each port counts its own samples toward the stride.
  Status Sample(std::vector<RdmaPortCounters>* out);
  // Ports of the last Scan, in Sample order.
  size_t port_count() const;
  // Samples ports [begin, end) into (*out)[begin, end); `out` must already
  // hold port_count() entries. Calls on disjoint ranges may run concurrently
  // (the node agent splits a large HCA set across threads); nothing else may
  // run at the same time. InvalidArgument for a bad range or size.
  Status SamplePorts(size_t begin, size_t end,
                     std::vector<RdmaPortCounters>* out);
  // Sorted device names under class/infiniband, joined: when it differs from
  // the one at the last Scan the caller rescans.
  StatusOr<std::string> DeviceSetToken() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One-shot: Scan plus one Sample, for the CLI and scripts.
struct LENS_EXPORT RdmaProbe {
  RdmaDevice device;
  std::vector<RdmaPortCounters> ports;  // same order as device.ports
};
LENS_EXPORT StatusOr<std::vector<RdmaProbe>> ProbeRdma(const HostRoots& roots);

}  // namespace lens

#endif  // LENS_RDMA_H_
