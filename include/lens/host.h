// Where a probe finds the host's kernel interfaces. Every reader in Lens takes
// these roots instead of hard-coding /sys, /proc and /dev, so the same code
// runs against the live machine, a host filesystem mounted into a container
// (/host/sys, ...) or a fixture tree in a test.
#ifndef LENS_HOST_H_
#define LENS_HOST_H_

#include <string>

#include "lens/export.h"

namespace lens {

// Plain value; copy freely.
struct LENS_EXPORT HostRoots {
  std::string sysfs = "/sys";
  std::string procfs = "/proc";
  std::string dev = "/dev";

  // Roots that all live under `prefix` ("<prefix>/sys", "<prefix>/proc",
  // "<prefix>/dev"), the layout of Lens's fixture trees and of a host
  // filesystem mounted at one point.
  static HostRoots Under(const std::string& prefix) {
    return HostRoots{prefix + "/sys", prefix + "/proc", prefix + "/dev"};
  }
};

}  // namespace lens

#endif  // LENS_HOST_H_
