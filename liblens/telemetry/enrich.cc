#include "telemetry/enrich.h"

namespace lens::telemetry {
namespace {

std::string_view Value(std::span<const WireLabel> labels,
                       std::string_view name) {
  for (const WireLabel& l : labels) {
    if (l.name == name) return l.value;
  }
  return {};
}

std::string_view First(std::span<const WireLabel> labels,
                       const std::vector<std::string>& names) {
  for (const std::string& n : names) {
    std::string_view v = Value(labels, n);
    if (!v.empty()) return v;
  }
  return {};
}

// dcgm-exporter writes a PCI address as NVML does ("00000000:3B:00.0"),
// Lens as sysfs does ("0000:3b:00.0"): an 8-digit domain loses its leading
// zeros to 4 digits and hex digits are lower case.
std::string_view NormalizeBdf(std::string_view bdf, std::string* scratch) {
  if (bdf.size() == 16 && bdf[8] == ':' && bdf.substr(0, 4) == "0000") {
    bdf.remove_prefix(4);
  }
  scratch->assign(bdf);
  for (char& c : *scratch) {
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
  }
  return *scratch;
}

}  // namespace

Enricher::Enricher(EnrichOptions options) : options_(std::move(options)) {}

EnrichStats Enricher::Enrich(const RemoteWriteRequest& request,
                             const OwnershipIndex& index,
                             RemoteWriteEncoder* out) {
  EnrichStats stats;
  for (const WireSeries& series : request.series) {
    const std::span<const WireLabel> labels = request.LabelsOf(series);
    const std::span<const WireSample> samples = request.SamplesOf(series);
    const std::string_view extra = request.ExtraOf(series);
    ++stats.series_in;
    stats.samples_in += samples.size();
    auto pass = [&] {
      out->AddSeries(labels, samples, extra);
      ++stats.series_out;
    };
    const std::string_view name = Value(labels, "__name__");
    bool selected = options_.series.metric_prefixes.empty();
    for (const std::string& prefix : options_.series.metric_prefixes) {
      selected |= name.substr(0, prefix.size()) == prefix;
    }
    if (!selected || !Value(labels, "workload_uid").empty()) {
      pass();  // not ours to look at, or enriched by an earlier hop
      continue;
    }
    const std::vector<Holding>* holdings = nullptr;
    const std::string_view ns = First(labels, options_.series.namespace_labels);
    const std::string_view pod = First(labels, options_.series.pod_labels);
    if (!ns.empty() && !pod.empty()) holdings = index.FindPod(ns, pod);
    const std::string_view node = First(labels, options_.series.node_labels);
    if (!holdings && !node.empty()) {
      for (const auto* names :
           {&options_.series.gpu_serial_labels, &options_.series.gpu_bdf_labels,
            &options_.series.gpu_uuid_labels}) {
        std::string_view id = First(labels, *names);
        if (names == &options_.series.gpu_bdf_labels && !id.empty()) {
          id = NormalizeBdf(id, &bdf_);
        }
        if (!id.empty()) holdings = index.FindDevice(node, id);
        if (holdings) break;
      }
      if (!holdings) {
        const std::string_view gpu =
            First(labels, options_.series.gpu_index_labels);
        if (!gpu.empty()) {
          holdings = index.FindDevice(node, "index:" + std::string(gpu));
        }
      }
      if (!holdings) {
        const std::string_view rdma =
            First(labels, options_.series.rdma_device_labels);
        if (!rdma.empty()) {
          holdings = index.FindDevice(node, "rdma:" + std::string(rdma));
        }
      }
    }
    if (!holdings) {
      pass();
      continue;
    }
    owners_.resize(samples.size());
    for (size_t i = 0; i < samples.size(); ++i) {
      owners_[i] = OwnershipIndex::OwnerAt(*holdings, samples[i].timestamp_ms);
    }
    bool first_run = true;
    size_t runs = 0;
    for (size_t start = 0; start < samples.size();) {
      size_t end = start + 1;
      while (end < samples.size() && owners_[end] == owners_[start]) ++end;
      const std::span<const WireSample> run =
          samples.subspan(start, end - start);
      const std::string_view run_extra = first_run ? extra : std::string_view();
      const Owner* owner = owners_[start];
      ++runs;
      if (!owner) {
        out->AddSeries(labels, run, run_extra);
        ++stats.series_out;
      } else {
        // The owner's labels, merged into the sorted label list.
        const WireLabel added[] = {
            {"pod_uid", owner->pod_uid},
            {"workload_kind", owner->workload_kind},
            {"workload_name", owner->workload_name},
            {"workload_namespace", owner->workload_namespace},
            {"workload_uid", owner->workload_uid}};
        labels_.clear();
        size_t a = 0;
        for (const WireLabel& l : labels) {
          while (a < std::size(added) && added[a].name < l.name) {
            labels_.push_back(added[a++]);
          }
          if (a < std::size(added) && added[a].name == l.name) continue;
          labels_.push_back(l);
        }
        while (a < std::size(added)) labels_.push_back(added[a++]);
        out->AddSeries(labels_, run, run_extra);
        ++stats.series_out;
        stats.samples_enriched += run.size();
        if (options_.compat_names) {
          compat_name_ = "workload_" + std::string(name);
          for (WireLabel& l : labels_) {
            if (l.name == "__name__") l.value = compat_name_;
          }
          out->AddSeries(labels_, run);
          ++stats.series_out;
        }
      }
      first_run = false;
      start = end;
    }
    if (runs > 1) ++stats.series_split;
  }
  out->AddExtra(request.extra);
  return stats;
}

}  // namespace lens::telemetry
