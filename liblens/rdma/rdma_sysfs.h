// The static side of class/infiniband: device and port attributes as the
// kernel prints them (drivers/infiniband/core/sysfs.c), parsed into the
// public RdmaDevice / RdmaPort values. Counters are RdmaReader's business.
#ifndef LENS_RDMA_RDMA_SYSFS_H_
#define LENS_RDMA_RDMA_SYSFS_H_

#include <optional>
#include <string>
#include <string_view>

#include "lens/rdma.h"
#include "lens/status.h"

namespace lens::rdma {

// "4: ACTIVE" -> "ACTIVE", "5: LinkUp" -> "LinkUp", "1: CA" -> "CA" (the
// "%d: %s" enum files); text without such a prefix comes back trimmed.
std::string_view StripEnumPrefix(std::string_view text);

// The leading rate of a port's `rate` file in Gb/s: "400 Gb/sec (4X NDR)" ->
// 400, "2.5 Gb/sec (1X SDR)" -> 2.5. nullopt when the text does not start
// with "<number> Gb/sec".
std::optional<double> ParseRateGbps(std::string_view rate);

// True for a PCI address as sysfs names functions: "0000:0d:00.0" (domain of
// 4 or more hex digits, as with VMD's 10000:...).
bool IsPciAddress(std::string_view name);

// Reads one device's attributes, netdevs, PCI address, NUMA node and ports
// from `device_dir` (class/infiniband/<name>). A missing attribute file
// leaves its field empty; any other read error, a ports/ directory that
// cannot be listed, or a value that does not parse (port name, lid,
// numa_node) is an error naming the file.
StatusOr<RdmaDevice> ReadRdmaDevice(const std::string& device_dir,
                                    const std::string& name);

// Reads one port directory (ports/<n>); errors as ReadRdmaDevice.
StatusOr<RdmaPort> ReadRdmaPort(const std::string& port_dir, int port);

}  // namespace lens::rdma

#endif  // LENS_RDMA_RDMA_SYSFS_H_
