// Owners decoded from the API server's JSON, with the status conventions of
// batch/v1 Job, Kubeflow (PyTorchJob, MPIJob, TrainJob), JobSet and RayJob.
#include "controller/workload_model.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <string>

#include "controller/kube_time.h"
#include "core/json_reader.h"

namespace lens::controller {
namespace {

std::optional<Timestamp> Time(const rapidjson::Value& object, const char* key) {
  const std::string text = JsonString(object, key);
  if (text.empty()) return std::nullopt;
  auto t = ParseKubeTime(text);
  if (!t.ok()) return std::nullopt;
  return *t;
}

// Status from status.conditions (True ones): a terminal condition wins,
// then Suspended, then Running, then Created.
void FromConditions(const rapidjson::Value& status, OwnerView* out) {
  const rapidjson::Value* conditions = JsonMember(status, "conditions");
  if (!conditions || !conditions->IsArray()) return;
  int best = 0;  // 1 Pending, 2 Running, 3 Suspended, 4 Succeeded, 5 Failed
  std::optional<Timestamp> at;
  for (const rapidjson::Value& c : conditions->GetArray()) {
    if (!c.IsObject() || JsonString(c, "status") != "True") continue;
    const std::string type = JsonString(c, "type");
    int rank = 0;
    if (type == "Failed") {
      rank = 5;
    } else if (type == "Succeeded" || type == "Complete" ||
               type == "Completed") {
      rank = 4;
    } else if (type == "Suspended") {
      rank = 3;
    } else if (type == "Running" || type == "Restarting") {
      rank = 2;
    } else if (type == "Created") {
      rank = 1;
    }
    if (rank > best) {
      best = rank;
      at = Time(c, "lastTransitionTime");
    }
  }
  static constexpr const char* kNames[] = {"",          "Pending",   "Running",
                                           "Suspended", "Succeeded", "Failed"};
  out->status = kNames[best];
  if (best >= 4) {
    out->ended_at = Time(status, "completionTime");
    if (!out->ended_at) out->ended_at = at;
  }
}

// KubeRay's RayJob: status.jobStatus and status.endTime.
void FromRayJob(const rapidjson::Value& status, OwnerView* out) {
  const std::string job = JsonString(status, "jobStatus");
  if (job == "SUCCEEDED") {
    out->status = "Succeeded";
  } else if (job == "FAILED" || job == "STOPPED") {
    out->status = "Failed";
  } else if (job == "RUNNING") {
    out->status = "Running";
  } else if (job == "PENDING" || job.empty()) {
    const std::string deployment = JsonString(status, "jobDeploymentStatus");
    out->status = deployment == "Failed" ? "Failed"
                  : deployment.empty()   ? ""
                                         : "Pending";
  }
  if (out->status == "Succeeded" || out->status == "Failed") {
    out->ended_at = Time(status, "endTime");
  }
}

}  // namespace

StatusOr<OwnerView> DecodeOwner(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return InvalidArgumentError("owner: not a JSON object");
  }
  const rapidjson::Value* meta = JsonMember(doc, "metadata");
  if (!meta || !meta->IsObject()) {
    return InvalidArgumentError("owner: no metadata");
  }
  OwnerView out;
  out.api_version = JsonString(doc, "apiVersion");
  out.kind = JsonString(doc, "kind");
  out.uid = JsonString(*meta, "uid");
  out.name = JsonString(*meta, "name");
  out.namespace_name = JsonString(*meta, "namespace");
  const std::string where =
      "owner " + out.kind + " " +
      (out.namespace_name.empty() ? out.name
                                  : out.namespace_name + "/" + out.name);
  if (out.uid.empty() || out.name.empty()) {
    return InvalidArgumentError(
        where + ": metadata.uid and metadata.name are required");
  }
  if (auto t = Time(*meta, "creationTimestamp")) out.created_at = *t;
  if (const rapidjson::Value* labels = JsonMember(*meta, "labels");
      labels && labels->IsObject()) {
    for (const auto& m : labels->GetObject()) {
      if (m.value.IsString()) {
        out.labels[m.name.GetString()] = m.value.GetString();
      }
    }
  }
  if (const rapidjson::Value* owners = JsonMember(*meta, "ownerReferences");
      owners && owners->IsArray()) {
    for (const rapidjson::Value& o : owners->GetArray()) {
      const rapidjson::Value* controller = JsonMember(o, "controller");
      if (!o.IsObject() || !controller || !controller->IsBool() ||
          !controller->GetBool()) {
        continue;
      }
      out.controller =
          OwnerReference{JsonString(o, "apiVersion"), JsonString(o, "kind"),
                         JsonString(o, "name"), JsonString(o, "uid"), true};
      break;
    }
  }
  if (const rapidjson::Value* status = JsonMember(doc, "status");
      status && status->IsObject()) {
    if (out.kind == "RayJob") {
      FromRayJob(*status, &out);
    } else {
      FromConditions(*status, &out);
    }
  }
  return out;
}

void WorkloadStatusFromPods(const std::vector<PodOutcome>& pods,
                            std::string* status,
                            std::optional<Timestamp>* ended_at) {
  if (pods.empty()) {
    *status = "Pending";
    ended_at->reset();
    return;
  }
  bool all_ended = true, failed = false, running = false;
  std::optional<Timestamp> last;
  for (const PodOutcome& p : pods) {
    const bool terminal = p.phase == "Succeeded" || p.phase == "Failed";
    if (p.phase == "Running" && !p.deleted) running = true;
    if (!terminal && !p.deleted) all_ended = false;
    if (p.phase == "Failed") failed = true;
    if (p.ended_at && (!last || *p.ended_at > *last)) last = p.ended_at;
  }
  if (all_ended) {
    *status = failed ? "Failed" : "Succeeded";
    *ended_at = last;
  } else {
    *status = running ? "Running" : "Pending";
    ended_at->reset();
  }
}

}  // namespace lens::controller
