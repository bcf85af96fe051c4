// The busybox OCI image of the containerd test harness, built from the host's
// static /bin/busybox (nothing is downloaded).
#ifndef LENS_TEST_SUPPORT_OCI_IMAGE_H_
#define LENS_TEST_SUPPORT_OCI_IMAGE_H_

#include <string>

#include "lens/status.h"

namespace lens::test {

// Writes the OCI image archive <work>/image.tar (returned): one uncompressed
// layer with the host's static busybox and the applets sh, sleep, true, cat,
// head, tail, dd, echo and ls as symlinks, named `ref`. Needs tar and
// sha256sum; uses `work` (created) as scratch space.
StatusOr<std::string> BuildBusyboxArchive(const std::string& work,
                                          const std::string& ref);

}  // namespace lens::test

#endif  // LENS_TEST_SUPPORT_OCI_IMAGE_H_
