// Declarative tuning: the spec made canonical, the node read and compared
// (PlanTuning), and what differs written (ApplyTuning).
#include "tuner/tuner.h"

#include "core/kernel_file.h"
#include "tuner/sysctl_rules.h"
#include "tuner/tuning_files.h"

namespace lens {
namespace {

// The spec with canonical values, so that found and desired compare as
// text (the kernel prints integers canonically).
StatusOr<TuningSpec> Canonical(const TuningSpec& spec) {
  LENS_RETURN_IF_ERROR(spec.Validate());
  TuningSpec out = spec;
  for (auto& [key, value] : out.sysctls) {
    LENS_ASSIGN_OR_RETURN(value, config::CanonicalSysctl(key, value));
  }
  const int64_t nofile_max = config::TunerNofileMax(out.sysctls);
  for (TunerLimit& limit : out.limits) {
    LENS_RETURN_IF_ERROR(config::CheckTunerLimit(&limit, nofile_max));
  }
  return out;
}

std::string Lines(const std::string& content) {
  size_t n = 0;
  for (size_t at = 0; (at = content.find('\n', at)) != std::string::npos; ++at)
    ++n;
  // Two comment lines head every file Lens writes.
  n = n > 2 ? n - 2 : 0;
  return std::to_string(n) + (n == 1 ? " line" : " lines");
}

// The setting of one whole file: `desired` content ("" = no file).
TuningSetting FileSetting(std::string_view name, const std::string& desired,
                          const StatusOr<std::optional<std::string>>& found) {
  TuningSetting s;
  s.kind = TuningKind::kFile;
  s.key = std::string(name);
  s.desired = desired.empty() ? "absent" : Lines(desired);
  if (!found.ok()) {
    s.found = "unreadable";
    s.error = found.status().message();
    return s;
  }
  s.found = !found->has_value() ? "absent" : Lines(**found);
  s.in_sync = found->has_value() ? **found == desired : desired.empty();
  if (!s.in_sync && found->has_value()) s.found += " (differs)";
  return s;
}

}  // namespace

Status TuningSpec::Validate() const {
  if (proc_root.empty() || proc_root.front() != '/')
    return InvalidArgumentError("procRoot: must be an absolute path");
  if (etc_root.empty() || etc_root.front() != '/')
    return InvalidArgumentError("etcRoot: must be an absolute path");
  // One rule set: the config section's.
  TunerOptions rules;
  rules.sysctls = sysctls;
  rules.limits = limits;
  return rules.Validate();
}

TuningSpec TuningSpecFromConfig(const TunerOptions& options) {
  TuningSpec spec;
  spec.proc_root = options.proc_root;
  spec.etc_root = options.etc_root;
  spec.persist = options.persist;
  spec.sysctls = options.sysctls;
  spec.limits = options.limits;
  return spec;
}

std::string_view TuningKindName(TuningKind kind) {
  switch (kind) {
    case TuningKind::kSysctl:
      return "sysctl";
    case TuningKind::kLimit:
      return "limits";
    case TuningKind::kFile:
      break;
  }
  return "file";
}

size_t TuningPlan::changes() const {
  size_t n = 0;
  for (const TuningSetting& s : settings) n += s.in_sync ? 0 : 1;
  return n;
}

StatusOr<TuningPlan> PlanTuning(const TuningSpec& raw) {
  LENS_ASSIGN_OR_RETURN(TuningSpec spec, Canonical(raw));
  TuningPlan plan;
  for (const auto& [key, value] : spec.sysctls) {
    TuningSetting s;
    s.kind = TuningKind::kSysctl;
    s.key = key;
    s.desired = value;
    const std::string path = tuner::SysctlPath(spec.proc_root, key);
    StatusOr<std::string> found = ReadKernelFile(path);
    if (!found.ok()) {
      s.found = "unreadable";
      s.error = found.status().code() == StatusCode::kNotFound
                    ? "this kernel has no " + path
                    : found.status().message();
    } else {
      s.found = tuner::NormalizeBlanks(*found);
      s.in_sync = s.found == s.desired;
    }
    plan.settings.push_back(std::move(s));
  }
  const std::string limits_path =
      spec.etc_root + "/" + std::string(tuner::kLimitsFile);
  const auto limits_file = tuner::ReadOptionalFile(limits_path);
  const std::map<std::string, std::string> found_limits =
      limits_file.ok() && limits_file->has_value()
          ? tuner::ParseLimitsFile(**limits_file)
          : std::map<std::string, std::string>();
  for (const TunerLimit& limit : spec.limits) {
    TuningSetting s;
    s.kind = TuningKind::kLimit;
    s.key = tuner::LimitKey(limit);
    s.desired = limit.value;
    if (!limits_file.ok()) {
      s.found = "unreadable";
      s.error = limits_file.status().message();
    } else {
      auto it = found_limits.find(s.key);
      s.found = it == found_limits.end() ? "absent" : it->second;
      s.in_sync = s.found == s.desired;
    }
    plan.settings.push_back(std::move(s));
  }
  plan.settings.push_back(FileSetting(
      tuner::kLimitsFile, tuner::RenderLimitsFile(spec.limits), limits_file));
  if (spec.persist) {
    const std::string path =
        spec.etc_root + "/" + std::string(tuner::kSysctlFile);
    plan.settings.push_back(FileSetting(tuner::kSysctlFile,
                                        tuner::RenderSysctlFile(spec.sysctls),
                                        tuner::ReadOptionalFile(path)));
  }
  return plan;
}

std::vector<TuningOutcome> ApplyTuning(const TuningSpec& raw,
                                       const TuningPlan& plan) {
  std::vector<TuningOutcome> out;
  StatusOr<TuningSpec> spec = Canonical(raw);
  if (!spec.ok()) {
    for (const TuningSetting& s : plan.settings)
      if (!s.in_sync) out.push_back({s, spec.status()});
    return out;
  }
  // Each file is written once, however many of its settings differ.
  auto write_file = [&](std::string_view name, const std::string& content) {
    const std::string path = spec->etc_root + "/" + std::string(name);
    return content.empty() ? tuner::RemoveFile(path)
                           : tuner::WriteFileAtomically(path, content);
  };
  bool limits_differ = false, sysctl_file_differs = false;
  for (const TuningSetting& s : plan.settings) {
    if (s.in_sync || !s.error.empty()) continue;
    if (s.kind == TuningKind::kLimit ||
        (s.kind == TuningKind::kFile && s.key == tuner::kLimitsFile)) {
      limits_differ = true;
    } else if (s.kind == TuningKind::kFile) {
      sysctl_file_differs = true;
    }
  }
  const Status limits_status =
      limits_differ ? write_file(tuner::kLimitsFile,
                                 tuner::RenderLimitsFile(spec->limits))
                    : OkStatus();
  const Status sysctl_file_status =
      sysctl_file_differs && spec->persist
          ? write_file(tuner::kSysctlFile,
                       tuner::RenderSysctlFile(spec->sysctls))
          : OkStatus();
  for (const TuningSetting& s : plan.settings) {
    if (s.in_sync || !s.error.empty()) continue;
    Status st;
    if (s.kind == TuningKind::kSysctl) {
      auto want = spec->sysctls.find(s.key);
      if (want == spec->sysctls.end()) continue;  // not from this spec
      const std::string path = tuner::SysctlPath(spec->proc_root, s.key);
      st = tuner::WriteSysctl(path, want->second);
      // The kernel clamps some values silently: read it back.
      StatusOr<std::string> now = ReadKernelFile(path);
      if (st.ok() && now.ok() && tuner::NormalizeBlanks(*now) != want->second) {
        st = FailedPreconditionError(path + ": wrote " + want->second +
                                     ", the kernel reads back " +
                                     tuner::NormalizeBlanks(*now));
      }
    } else if (s.kind == TuningKind::kLimit || s.key == tuner::kLimitsFile) {
      st = limits_status;
    } else {
      st = sysctl_file_status;
    }
    out.push_back({s, st});
  }
  return out;
}

std::string FormatTuningChange(const TuningSetting& s) {
  std::string line = std::string(TuningKindName(s.kind)) + " " + s.key + ": ";
  if (!s.error.empty()) return line + "cannot read: " + s.error;
  return line + s.found + " -> " + s.desired;
}

}  // namespace lens
