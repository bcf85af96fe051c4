// `lens workloads --database URL [--json] [--pods] [--namespace NS]`: the
// top-level workloads the controller found, newest first, with their GPUs,
// pods and nodes.
#include <cstdio>
#include <ctime>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "commands.h"
#include "core/json.h"
#include "lens/store.h"

namespace lens::cli {
namespace {

struct WorkloadsOptions {
  std::string url;
  std::string namespace_name;
  bool json = false;
  bool pods = false;
  int limit = 100;
};

int64_t Seconds(const Timestamp& t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch())
      .count();
}

// "a,b,c" or "a,b +3" when there are more than `max`.
std::string Join(const std::set<std::string>& names, size_t max) {
  std::string out;
  size_t n = 0;
  for (const std::string& name : names) {
    if (n == max) {
      out += " +" + std::to_string(names.size() - max);
      break;
    }
    if (n++) out += ',';
    out += name;
  }
  return out.empty() ? "-" : out;
}

void WriteJson(const WorkloadRecord& w, const std::vector<PodRecord>& pods,
               JsonWriter* out) {
  out->StartObject();
  out->Member("uid", w.uid);
  out->Member("api_version", w.api_version);
  out->Member("kind", w.kind);
  out->Member("namespace", w.namespace_name);
  out->Member("name", w.name);
  out->Member("status", w.status);
  out->Member("gpu_request", w.gpu_request);
  out->Member("created_at", Seconds(w.created_at));
  out->Key("ended_at");
  w.ended_at ? out->Int64(Seconds(*w.ended_at)) : out->Null();
  out->Key("pods");
  out->StartArray();
  for (const PodRecord& p : pods) {
    out->StartObject();
    out->Member("uid", p.uid);
    out->Member("name", p.name);
    out->Member("node", p.node);
    out->Member("phase", p.phase);
    out->Member("gpus", p.gpu_allocated);
    out->Member("restarts", p.restarts);
    out->Member("deleted", p.deleted);
    out->EndObject();
  }
  out->EndArray();
  out->EndObject();
}

int Run(const WorkloadsOptions& opt) {
  StoreOptions so;
  so.migrate = false;
  so.create_if_missing = false;
  so.max_connections = 1;
  auto store = Store::Open(opt.url, so);
  if (!store.ok()) {
    std::fprintf(stderr, "lens workloads: %s\n",
                 store.status().message().c_str());
    return 1;
  }
  WorkloadQuery q;
  q.parent_uid = "";
  q.namespace_name = opt.namespace_name;
  q.page.page_size = opt.limit;
  auto page = (*store)->pods().ListWorkloads(q);
  if (!page.ok()) {
    std::fprintf(stderr, "lens workloads: %s\n",
                 page.status().message().c_str());
    return 1;
  }
  std::string out;
  JsonWriter json(&out);
  if (opt.json) json.StartArray();
  if (!opt.json) {
    char line[256];
    std::snprintf(line, sizeof line,
                  "%-40s %-12s %-10s %5s %5s  %-20s  %-20s  %s\n", "WORKLOAD",
                  "KIND", "STATUS", "GPUS", "PODS", "CREATED", "ENDED",
                  "NODES");
    out += line;
  }
  for (size_t i = 0; i < page->items.size(); ++i) {
    const WorkloadRecord& w = page->items[i];
    auto pods = (*store)->pods().ListWorkloadPods(w.uid);
    if (!pods.ok()) {
      std::fprintf(stderr, "lens workloads: %s\n",
                   pods.status().message().c_str());
      return 1;
    }
    if (opt.json) {
      WriteJson(w, *pods, &json);
      continue;
    }
    std::set<std::string> nodes;
    for (const PodRecord& p : *pods) {
      if (!p.node.empty()) nodes.insert(p.node);
    }
    const std::string name =
        w.namespace_name.empty() ? w.name : w.namespace_name + "/" + w.name;
    char line[2048];
    std::snprintf(line, sizeof line,
                  "%-40s %-12s %-10s %5d %5zu  %-20s  %-20s  %s\n",
                  name.c_str(), w.kind.c_str(), w.status.c_str(), w.gpu_request,
                  pods->size(), FormatTime(w.created_at).c_str(),
                  FormatTime(w.ended_at).c_str(), Join(nodes, 4).c_str());
    out += line;
    if (!opt.pods) continue;
    for (const PodRecord& p : *pods) {
      // Pod rows under it: the same columns, the pod's start and end, and
      // its restarts after the node.
      std::snprintf(
          line, sizeof line,
          "  %-38s %-12s %-10s %5d %5s  %-20s  %-20s  %s%s%s\n", p.name.c_str(),
          "Pod", p.deleted ? "Deleted" : p.phase.c_str(), p.gpu_allocated, "-",
          FormatTime(p.started_at).c_str(), FormatTime(p.ended_at).c_str(),
          p.node.empty() ? "-" : p.node.c_str(),
          p.restarts ? (" restarts=" + std::to_string(p.restarts)).c_str() : "",
          p.deleted ? (" (was " + p.phase + ")").c_str() : "");
      out += line;
    }
  }
  if (opt.json) {
    json.EndArray();
    out += '\n';
  } else if (page->total > static_cast<int64_t>(page->items.size())) {
    out += "(" + std::to_string(page->items.size()) + " of " +
           std::to_string(page->total) + "; --limit shows more)\n";
  } else if (page->items.empty()) {
    out += "(no workloads with GPUs yet: is lens-controller running?)\n";
  }
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace

Command AddWorkloads(CLI::App& app) {
  auto opt = std::make_shared<WorkloadsOptions>();
  CLI::App* cmd = app.add_subcommand(
      "workloads",
      "List the GPU workloads the controller found, with pods, nodes and GPUs");
  cmd->add_option("--database", opt->url,
                  "sqlite:///path/lens.db or postgresql://user@host:5432/db")
      ->required()
      ->envname("LENS_STORE_URL");
  cmd->add_option("--namespace", opt->namespace_name, "only this namespace");
  cmd->add_option("--limit", opt->limit, "at most this many (1..1000)")
      ->check(CLI::Range(1, 1000));
  cmd->add_flag("--pods", opt->pods, "list each workload's pods under it");
  cmd->add_flag("--json", opt->json, "Print JSON (pods included)");
  return [opt] { return Run(*opt); };
}

}  // namespace lens::cli
