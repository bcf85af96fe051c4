// FlowProbe in a build without eBPF (LENS_BUILD_BPF=OFF).
#include "lens/flow.h"

namespace lens {
StatusOr<std::unique_ptr<FlowProbe>> FlowProbe::Open(const FlowProbeOptions&) {
  return UnimplementedError(
      "this Lens was built without eBPF (LENS_BUILD_BPF=OFF): TCP flow "
      "probes are unavailable; rebuild with -DLENS_BUILD_BPF=ON");
}
}  // namespace lens
