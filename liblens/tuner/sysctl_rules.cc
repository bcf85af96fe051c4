// The rules of the `tuner:` section (lens-tuner): the sysctls Lens may set
// with their ranges, the pam_limits items, and the checks that refuse the
// rest before anything is written to a node.
#include "tuner/sysctl_rules.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <set>
#include <tuple>

#include "core/config_decode.h"

namespace lens::config {
namespace {

constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();
constexpr int64_t kLongMax = std::numeric_limits<int64_t>::max();

// A sysctl Lens may set: how many integers its value has and the range of
// each. `ordered`: the integers may not decrease (min default max).
struct SysctlRule {
  std::string_view key;
  int count;
  int64_t min;
  int64_t max;
  bool ordered = false;
};

// Ranges are the kernel's where it enforces one (proc_dointvec_minmax
// bounds; swappiness 200 since Linux 5.8, numa_balancing's memory tiering
// modes since 5.18), else what is sane for a training node: a lower bound
// that keeps the node usable.
constexpr SysctlRule kSysctls[] = {
    {"fs.file-max", 1, 8192, kLongMax},
    {"fs.inotify.max_user_instances", 1, 128, kIntMax},
    {"fs.inotify.max_user_watches", 1, 8192, kIntMax},
    {"fs.nr_open", 1, 1024, 1073741816},
    {"kernel.numa_balancing", 1, 0, 3},
    {"kernel.pid_max", 1, 301, 4194304},
    {"kernel.threads-max", 1, 20, 1073741824},
    {"net.core.netdev_max_backlog", 1, 1, kIntMax},
    {"net.core.rmem_default", 1, 4096, kIntMax},
    {"net.core.rmem_max", 1, 4096, kIntMax},
    {"net.core.somaxconn", 1, 128, kIntMax},
    {"net.core.wmem_default", 1, 4096, kIntMax},
    {"net.core.wmem_max", 1, 4096, kIntMax},
    {"net.ipv4.ip_local_port_range", 2, 1, 65535, true},
    {"net.ipv4.tcp_max_syn_backlog", 1, 128, kIntMax},
    {"net.ipv4.tcp_mtu_probing", 1, 0, 2},
    {"net.ipv4.tcp_rmem", 3, 1, kIntMax, true},
    {"net.ipv4.tcp_slow_start_after_idle", 1, 0, 1},
    {"net.ipv4.tcp_wmem", 3, 1, kIntMax, true},
    {"vm.dirty_background_ratio", 1, 0, 100},
    {"vm.dirty_ratio", 1, 0, 100},
    {"vm.max_map_count", 1, 65530, kIntMax},
    {"vm.nr_hugepages", 1, 0, kIntMax},
    {"vm.overcommit_memory", 1, 0, 2},
    {"vm.overcommit_ratio", 1, 0, 100},
    {"vm.swappiness", 1, 0, 200},
};

// pam_limits items Lens may set, with the range of a number (KiB for the
// sizes). nofile's upper bound is the kernel's default fs.nr_open: a higher
// hard limit makes every login fail, so it needs fs.nr_open raised too.
struct LimitRule {
  std::string_view item;
  int64_t min;
  int64_t max;
  bool unlimited_ok;
};
constexpr int64_t kDefaultNrOpen = 1048576;
constexpr int64_t kKibMax = kLongMax / 1024;
constexpr LimitRule kLimits[] = {
    {"nofile", 1, kDefaultNrOpen, false}, {"memlock", 0, kKibMax, true},
    {"nproc", 1, 4194304, true},          {"stack", 16, kKibMax, true},
    {"core", 0, kKibMax, true},
};

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min(
          {row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// " (did you mean vm.max_map_count?)" for a near miss, else "".
std::string Hint(std::string_view key) {
  std::string_view best;
  size_t best_distance = 4;  // a typo, not a different key
  for (const SysctlRule& r : kSysctls) {
    const size_t d = EditDistance(key, r.key);
    if (d < best_distance) {
      best = r.key;
      best_distance = d;
    }
  }
  return best.empty() ? "" : " (did you mean " + std::string(best) + "?)";
}

StatusOr<int64_t> ParseInt(std::string_view text) {
  int64_t value = 0;
  auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    return InvalidArgumentError("\"" + std::string(text) +
                                "\" is not an integer");
  }
  return value;
}

const LimitRule* FindLimit(std::string_view item) {
  for (const LimitRule& r : kLimits)
    if (r.item == item) return &r;
  return nullptr;
}

}  // namespace

std::vector<std::string_view> SplitBlanks(std::string_view text) {
  std::vector<std::string_view> out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t start = text.find_first_not_of(" \t", at);
    if (start == std::string_view::npos) break;
    size_t end = text.find_first_of(" \t", start);
    if (end == std::string_view::npos) end = text.size();
    out.push_back(text.substr(start, end - start));
    at = end;
  }
  return out;
}

std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> SplitCommaItems(std::string_view text) {
  std::vector<std::string_view> out;
  for (size_t at = 0; at <= text.size();) {
    size_t comma = text.find(',', at);
    if (comma == std::string_view::npos) comma = text.size();
    if (std::string_view item = TrimBlanks(text.substr(at, comma - at));
        !item.empty())
      out.push_back(item);
    at = comma + 1;
  }
  return out;
}

// Checks one limit on its own and makes its value canonical. Messages start
// with the limit's name ("nofile: ...", "@gpu memlock: ...").
Status CheckTunerLimit(TunerLimit* limit, int64_t nofile_max) {
  const std::string name = (limit->domain == "*" ? "" : limit->domain + " ") +
                           (limit->item.empty() ? "(no item)" : limit->item);
  if (limit->domain.empty() ||
      limit->domain.find_first_of(" \t#,") != std::string::npos) {
    return InvalidArgumentError(name +
                                ": domain must be one word without '#' or ','");
  }
  const LimitRule* rule = FindLimit(limit->item);
  if (rule == nullptr) {
    return InvalidArgumentError(
        "unknown item \"" + limit->item +
        "\" (one of nofile, memlock, nproc, stack, core)");
  }
  const int64_t max = rule->item == "nofile" ? nofile_max : rule->max;
  const std::string range = std::to_string(rule->min) + ".." +
                            std::to_string(max) +
                            (rule->unlimited_ok ? " or unlimited" : "");
  if (limit->value == "unlimited" || limit->value == "infinity") {
    if (!rule->unlimited_ok) {
      return InvalidArgumentError(
          name +
          ": cannot be unlimited (the kernel caps open files at fs.nr_open, "
          "and a login over it fails): give a number");
    }
    limit->value = "unlimited";
    return OkStatus();
  }
  StatusOr<int64_t> value = ParseInt(limit->value);
  if (!value.ok() || *value < rule->min || *value > max) {
    std::string why =
        name + ": must be in " + range + ", got \"" + limit->value + "\"";
    if (rule->item == "nofile" && value.ok() && *value > max) {
      why += " (above fs.nr_open " + std::to_string(max) +
             ": raise fs.nr_open in tuner.sysctls as well)";
    }
    return InvalidArgumentError(why);
  }
  limit->value = std::to_string(*value);
  return OkStatus();
}

// The checks across limits: one entry per (domain, type, item), soft <= hard.
Status CheckTunerLimitSet(const std::vector<TunerLimit>& limits) {
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  for (const TunerLimit& l : limits) {
    const std::string type(TunerLimitTypeName(l.type));
    for (const char* t : {"soft", "hard"}) {
      if (l.type != TunerLimit::Type::kBoth && type != t) continue;
      if (!seen.insert({l.domain, t, l.item}).second) {
        return InvalidArgumentError(l.domain + " " + l.item + ": the " + t +
                                    " limit is set twice");
      }
    }
  }
  for (const TunerLimit& soft : limits) {
    if (soft.type != TunerLimit::Type::kSoft || soft.value == "unlimited")
      continue;
    for (const TunerLimit& hard : limits) {
      if (hard.type != TunerLimit::Type::kHard || hard.item != soft.item ||
          hard.domain != soft.domain || hard.value == "unlimited")
        continue;
      if (std::stoll(soft.value) > std::stoll(hard.value)) {
        return InvalidArgumentError(soft.domain + " " + soft.item + ": soft " +
                                    soft.value + " is above hard " +
                                    hard.value);
      }
    }
  }
  return OkStatus();
}

// fs.nr_open if the same config raises it, else the kernel's default.
int64_t TunerNofileMax(const std::map<std::string, std::string>& sysctls) {
  auto it = sysctls.find("fs.nr_open");
  if (it == sysctls.end()) return kDefaultNrOpen;
  StatusOr<int64_t> v = ParseInt(it->second);
  return v.ok() ? std::max(*v, kDefaultNrOpen) : kDefaultNrOpen;
}

StatusOr<TunerLimit::Type> ParseTunerLimitType(std::string_view text) {
  if (text == "soft") return TunerLimit::Type::kSoft;
  if (text == "hard") return TunerLimit::Type::kHard;
  if (text == "both" || text == "-") return TunerLimit::Type::kBoth;
  return InvalidArgumentError("expected soft, hard or both, got \"" +
                              std::string(text) + "\"");
}

bool IsKnownSysctl(std::string_view key) {
  return std::any_of(std::begin(kSysctls), std::end(kSysctls),
                     [&](const SysctlRule& r) { return r.key == key; });
}

StatusOr<std::string> CanonicalSysctl(std::string_view key,
                                      std::string_view value) {
  const SysctlRule* rule = nullptr;
  for (const SysctlRule& r : kSysctls)
    if (r.key == key) rule = &r;
  if (rule == nullptr) {
    return InvalidArgumentError("unknown key \"" + std::string(key) + "\"" +
                                Hint(key) +
                                "; the keys Lens may set are in docs/tuner.md");
  }
  const std::string name(key);
  const std::string range =
      std::to_string(rule->min) + ".." + std::to_string(rule->max);
  const std::vector<std::string_view> words = SplitBlanks(value);
  if (static_cast<int>(words.size()) != rule->count) {
    return InvalidArgumentError(
        name + ": expected " +
        (rule->count == 1 ? std::string("an integer")
                          : std::to_string(rule->count) + " integers") +
        " in " + range + ", got \"" + std::string(value) + "\"");
  }
  std::string out;
  int64_t previous = std::numeric_limits<int64_t>::min();
  for (std::string_view word : words) {
    StatusOr<int64_t> v = ParseInt(word);
    if (!v.ok() || *v < rule->min || *v > rule->max) {
      return InvalidArgumentError(name + ": must be in " + range + ", got " +
                                  std::string(value));
    }
    if (rule->ordered && *v < previous) {
      return InvalidArgumentError(name + ": the values may not decrease, got " +
                                  std::string(value));
    }
    previous = *v;
    if (!out.empty()) out.push_back(' ');
    out += std::to_string(*v);
  }
  return out;
}

}  // namespace lens::config

namespace lens {

std::string_view TunerLimitTypeName(TunerLimit::Type type) {
  switch (type) {
    case TunerLimit::Type::kSoft:
      return "soft";
    case TunerLimit::Type::kHard:
      return "hard";
    case TunerLimit::Type::kBoth:
      break;
  }
  return "both";
}

Status TunerOptions::Validate() const {
  LENS_RETURN_IF_ERROR(config::ValidateListenAddress(listen_address, true)
                           .WithContext("listenAddress"));
  if (interval < std::chrono::seconds(1)) {
    return InvalidArgumentError("interval: must be at least 1s");
  }
  if (proc_root.empty() || proc_root.front() != '/')
    return InvalidArgumentError("procRoot: must be an absolute path");
  if (etc_root.empty() || etc_root.front() != '/')
    return InvalidArgumentError("etcRoot: must be an absolute path");
  for (const auto& [key, value] : sysctls) {
    StatusOr<std::string> canonical = config::CanonicalSysctl(key, value);
    if (!canonical.ok()) return canonical.status().WithContext("sysctls");
  }
  const int64_t nofile_max = config::TunerNofileMax(sysctls);
  std::vector<TunerLimit> canonical = limits;
  for (TunerLimit& limit : canonical) {
    LENS_RETURN_IF_ERROR(
        config::CheckTunerLimit(&limit, nofile_max).WithContext("limits"));
  }
  LENS_RETURN_IF_ERROR(
      config::CheckTunerLimitSet(canonical).WithContext("limits"));
  if (tls_cert_file.empty() != tls_key_file.empty()) {
    return InvalidArgumentError(
        "tlsCertFile: tlsCertFile and tlsKeyFile go together");
  }
  return OkStatus();
}

}  // namespace lens
