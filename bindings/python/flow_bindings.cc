// lens.watch_flows: the same dicts as `lens flows --json` (built from
// lens::FlowsJson, so keys and units match the CLI exactly).
#include "flow_bindings.h"

#include <pybind11/pybind11.h>

#include <chrono>
#include <string>

#include "errors.h"
#include "lens/flow.h"

namespace py = pybind11;
using namespace pybind11::literals;  // NOLINT: "key"_a

namespace lens::python {

void BindFlows(py::module_& m) {
  m.def(
      "watch_flows",
      [](double seconds, const std::string& policy_path) {
        if (!(seconds > 0)) {
          ThrowIfError(InvalidArgumentError(
              "watch_flows: seconds must be positive, got " +
              std::to_string(seconds)));
        }
        FlowWatchOptions options;
        if (!policy_path.empty()) {
          StatusOr<FlowPolicy> policy = LoadFlowPolicy(policy_path);
          ThrowIfError(policy.status());
          options.policy = std::move(*policy);
        }
        StatusOr<std::vector<TcpFlow>> flows = InternalError("not run");
        {
          py::gil_scoped_release release;
          flows = WatchFlows(
              std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)),
              options);
        }
        ThrowIfError(flows.status());
        return py::module_::import("json")
            .attr("loads")(FlowsJson(*flows))
            .attr("__getitem__")("flows");
      },
      "seconds"_a, "policy"_a = "",
      "Attaches the eBPF TCP flow probe (needs root), watches for `seconds` "
      "and returns every socket that moved data, opened or closed "
      "meanwhile, as a list of dicts like `lens flows --json`: saddr, sport, "
      "daddr, dport, bytes_sent, bytes_received, retransmits, rtt_us (mean "
      "srtt, None without samples), class, direction, role, and pid/comm/"
      "cgroup_id where known. `policy`: a policy YAML file for the classes. "
      "Raises PermissionDeniedError when not root, LensError when the "
      "kernel lacks BTF or the tracepoints (the message says which).");
}

}  // namespace lens::python
