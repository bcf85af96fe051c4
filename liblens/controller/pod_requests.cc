#include "controller/pod_requests.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_reader.h"

namespace lens::controller {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

Status BadQuantity(std::string_view text, std::string_view why) {
  return InvalidArgumentError("invalid quantity \"" +
                              std::string(text.substr(0, 64)) +
                              "\": " + std::string(why));
}

// The suffix's power of ten and power of two (resource.Quantity's suffixer:
// decimal SI including n and u, binary SI, or an e/E exponent).
bool ParseSuffix(std::string_view s, int* e10, int* b2) {
  *e10 = 0;
  *b2 = 0;
  if (s.empty()) return true;
  static constexpr std::string_view kDecimal = "num kMGTPE";  // 10^(3(i-3))
  static constexpr std::string_view kBinary = "KMGTPE";       // 2^(10(i+1))
  if (s.size() == 1) {
    const size_t i = kDecimal.find(s[0]);
    if (i == std::string_view::npos || s[0] == ' ') return false;
    *e10 = 3 * (static_cast<int>(i) - 3);
    return true;
  }
  if (s.size() == 2 && s[1] == 'i') {
    const size_t i = kBinary.find(s[0]);
    if (i == std::string_view::npos) return false;
    *b2 = 10 * (static_cast<int>(i) + 1);
    return true;
  }
  if (s[0] != 'e' && s[0] != 'E') return false;
  size_t pos = 1;
  const bool negative = s[pos] == '-';
  if (s[pos] == '-' || s[pos] == '+') ++pos;
  if (pos == s.size()) return false;
  int exponent = 0;
  for (; pos < s.size(); ++pos) {
    if (s[pos] < '0' || s[pos] > '9') return false;
    // Past a few hundred every nonzero value overflows or rounds up to 1.
    exponent = std::min(exponent * 10 + (s[pos] - '0'), 100000);
  }
  *e10 = negative ? -exponent : exponent;
  return true;
}

// ceil(0.<frac> * 2^b2) for decimal digits `frac`, exactly: doubles the
// fraction b2 times, collecting the bits that carry out.
int64_t CeilFractionTimesPow2(std::string frac, int b2) {
  int64_t whole = 0;
  for (int i = 0; i < b2; ++i) {
    int carry = 0;
    for (size_t j = frac.size(); j-- > 0;) {
      const int d = (frac[j] - '0') * 2 + carry;
      frac[j] = static_cast<char>('0' + d % 10);
      carry = d / 10;
    }
    whole = whole * 2 + carry;
  }
  return whole + (frac.find_first_not_of('0') != std::string::npos ? 1 : 0);
}

bool MulOverflows(int64_t a, int64_t b, int64_t* out) {
  return __builtin_mul_overflow(a, b, out);
}

// The quantity in units of 10^-scale10, rounded up.
StatusOr<int64_t> ParseScaled(std::string_view text, int scale10) {
  if (text.empty()) return BadQuantity(text, "empty");
  size_t pos = 0;
  const bool negative = text[0] == '-';
  if (text[0] == '-' || text[0] == '+') ++pos;
  const size_t int_start = pos;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
  std::string_view int_digits = text.substr(int_start, pos - int_start);
  std::string_view frac_digits;
  if (pos < text.size() && text[pos] == '.') {
    const size_t start = ++pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
    frac_digits = text.substr(start, pos - start);
  }
  if (int_digits.empty() && frac_digits.empty()) {
    return BadQuantity(text, "no digits");
  }
  int e10, b2;
  if (!ParseSuffix(text.substr(pos), &e10, &b2)) {
    return BadQuantity(text, "unknown suffix \"" +
                                 std::string(text.substr(pos)) +
                                 "\" (want n u m k M G T P E, Ki..Ei or e<n>)");
  }
  // The significant digits D, with value D * 10^e10 * 2^b2.
  std::string digits(int_digits);
  digits += frac_digits;
  e10 += scale10 - static_cast<int>(frac_digits.size());
  const size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) return int64_t{0};
  if (negative) return BadQuantity(text, "negative");
  digits.erase(0, first);
  const size_t last = digits.find_last_not_of('0');
  e10 += static_cast<int>(digits.size() - 1 - last);
  digits.resize(last + 1);

  const Status overflow = BadQuantity(text, "too large");
  // Split D into a whole part and the (nonzero: trailing zeros are gone)
  // digits below the unit. Only a binary suffix needs those digits spelled
  // out, and then there are no more of them than the text has.
  bool has_frac = false;
  std::string frac;
  if (e10 < 0) {
    has_frac = true;
    const size_t below = static_cast<size_t>(-e10);
    if (below >= digits.size()) {
      if (b2 > 0) frac = std::string(below - digits.size(), '0') + digits;
      digits.clear();
    } else {
      if (b2 > 0) frac = digits.substr(digits.size() - below);
      digits.resize(digits.size() - below);
    }
    e10 = 0;
  }
  if (digits.size() > 19 || e10 > 19) return overflow;
  uint64_t whole_u = 0;
  for (char c : digits) whole_u = whole_u * 10 + static_cast<uint64_t>(c - '0');
  if (whole_u > static_cast<uint64_t>(kMax)) return overflow;
  int64_t whole = static_cast<int64_t>(whole_u);
  for (int i = 0; i < e10; ++i) {
    if (MulOverflows(whole, 10, &whole)) return overflow;
  }
  if (MulOverflows(whole, int64_t{1} << b2, &whole)) return overflow;
  if (has_frac) {
    const int64_t up = b2 == 0 ? 1 : CeilFractionTimesPow2(std::move(frac), b2);
    if (__builtin_add_overflow(whole, up, &whole)) return overflow;
  }
  return whole;
}

// Per-resource amounts (cpu in millis, the rest in whole units), keyed by
// name; a pod names a handful of resources, so a vector is the fast map.
struct Amount {
  std::string_view name;
  int64_t value;
};
using ResourceList = std::vector<Amount>;

int64_t* Find(ResourceList* list, std::string_view name) {
  for (Amount& a : *list) {
    if (a.name == name) return &a.value;
  }
  return nullptr;
}

Status Add(ResourceList* list, const ResourceList& more) {
  for (const Amount& a : more) {
    int64_t* v = Find(list, a.name);
    if (!v) {
      list->push_back(a);
    } else if (__builtin_add_overflow(*v, a.value, v)) {
      return InvalidArgumentError("spec: the request for " +
                                  std::string(a.name) + " overflows");
    }
  }
  return OkStatus();
}

void Max(ResourceList* list, const ResourceList& more) {
  for (const Amount& a : more) {
    int64_t* v = Find(list, a.name);
    if (!v) {
      list->push_back(a);
    } else if (a.value > *v) {
      *v = a.value;
    }
  }
}

bool IsRdma(std::string_view name) { return name.starts_with("rdma/"); }

class RequestReader {
 public:
  explicit RequestReader(const GpuResourceMatcher& gpus) : gpus_(gpus) {}

  // Adds the quantities of `list` (requests, limits or overhead) not yet in
  // `out`; `only_pod_level` keeps cpu and memory alone.
  Status ReadList(const rapidjson::Value& parent, const char* key,
                  const std::string& path, bool only_pod_level,
                  ResourceList* out) const {
    const rapidjson::Value* list = JsonMember(parent, key);
    if (!list) return OkStatus();
    if (!list->IsObject()) return JsonTypeError("", path + "." + key, "a map");
    for (const auto& m : list->GetObject()) {
      const std::string_view name(m.name.GetString(), m.name.GetStringLength());
      const bool cpu = name == "cpu";
      if (!cpu && name != "memory" &&
          (only_pod_level || (!IsRdma(name) && !gpus_.Matches(name)))) {
        continue;
      }
      if (Find(out, name)) continue;  // requests win over limits
      StatusOr<int64_t> v = Parse(m.value, cpu);
      if (!v.ok()) {
        return v.status().WithContext(path + "." + key + "[\"" +
                                      std::string(name) + "\"]");
      }
      out->push_back({name, *v});
    }
    return OkStatus();
  }

  // A container's request: requests[r], else limits[r] (the API server's
  // defaulting copies limits into missing requests).
  Status ReadResources(const rapidjson::Value& holder, const std::string& path,
                       bool only_pod_level, ResourceList* out) const {
    out->clear();
    const rapidjson::Value* res = JsonMember(holder, "resources");
    if (!res) return OkStatus();
    const std::string p = path + ".resources";
    if (!res->IsObject()) return JsonTypeError("", p, "an object");
    LENS_RETURN_IF_ERROR(ReadList(*res, "requests", p, only_pod_level, out));
    return ReadList(*res, "limits", p, only_pod_level, out);
  }

 private:
  static StatusOr<int64_t> Parse(const rapidjson::Value& v, bool millis) {
    if (v.IsString()) {
      const std::string_view text(v.GetString(), v.GetStringLength());
      return millis ? ParseQuantityMillis(text) : ParseQuantity(text);
    }
    // Quantity's UnmarshalJSON also takes a bare number.
    if (v.IsInt64() && v.GetInt64() >= 0) {
      int64_t out = v.GetInt64();
      if (millis && MulOverflows(out, 1000, &out)) {
        return InvalidArgumentError("invalid quantity: too large");
      }
      return out;
    }
    return InvalidArgumentError("expected a quantity string");
  }

  const GpuResourceMatcher& gpus_;
};

Status ReadContainers(const rapidjson::Value& spec, const char* key,
                      const RequestReader& reader, bool init,
                      ResourceList* total) {
  const rapidjson::Value* list = JsonMember(spec, key);
  if (!list) return OkStatus();
  const std::string path = std::string("spec.") + key;
  if (!list->IsArray()) return JsonTypeError("", path, "an array");
  ResourceList one, sidecars, init_peak;
  for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
    const rapidjson::Value& c = (*list)[i];
    const std::string p = path + "[" + std::to_string(i) + "]";
    if (!c.IsObject()) return JsonTypeError("", p, "an object");
    LENS_RETURN_IF_ERROR(reader.ReadResources(c, p, false, &one));
    if (!init) {
      LENS_RETURN_IF_ERROR(Add(total, one));
      continue;
    }
    const rapidjson::Value* policy = JsonMember(c, "restartPolicy");
    if (policy && policy->IsString() &&
        std::string_view(policy->GetString()) == "Always") {
      // A sidecar runs beside everything declared after it.
      LENS_RETURN_IF_ERROR(Add(total, one));
      LENS_RETURN_IF_ERROR(Add(&sidecars, one));
      Max(&init_peak, sidecars);
    } else {
      LENS_RETURN_IF_ERROR(Add(&one, sidecars));
      Max(&init_peak, one);
    }
  }
  Max(total, init_peak);
  return OkStatus();
}

Status ToInt32(std::string_view name, int64_t v, int32_t* out) {
  if (v > std::numeric_limits<int32_t>::max()) {
    return InvalidArgumentError("spec: the request for " + std::string(name) +
                                " is out of range");
  }
  *out = static_cast<int32_t>(v);
  return OkStatus();
}

}  // namespace

std::string GpuVendorOf(std::string_view resource) {
  const size_t slash = resource.find('/');
  if (slash == std::string_view::npos) return "";
  const std::string_view domain = resource.substr(0, slash);
  if (domain == "amd.com") return "amd";
  if (domain == "nvidia.com") return "nvidia";
  return std::string(domain);
}

std::vector<std::string> GpuResourceMatcher::Defaults() {
  return {"amd.com/gpu", "nvidia.com/gpu", "nvidia.com/mig-*"};
}

GpuResourceMatcher::GpuResourceMatcher(std::vector<std::string> patterns)
    : patterns_(std::move(patterns)) {}

bool GpuResourceMatcher::Matches(std::string_view resource) const {
  for (const std::string& p : patterns_) {
    if (p.empty()) continue;
    if (p.back() == '*') {
      if (resource.starts_with(std::string_view(p).substr(0, p.size() - 1))) {
        return true;
      }
    } else if (resource == p) {
      return true;
    }
  }
  return false;
}

StatusOr<int64_t> ParseQuantityMillis(std::string_view text) {
  return ParseScaled(text, 3);
}

StatusOr<int64_t> ParseQuantity(std::string_view text) {
  return ParseScaled(text, 0);
}

Status ComputePodRequests(const rapidjson::Value& spec,
                          const GpuResourceMatcher& gpus, PodRequests* out) {
  *out = PodRequests();
  const RequestReader reader(gpus);
  ResourceList total;
  LENS_RETURN_IF_ERROR(
      ReadContainers(spec, "containers", reader, false, &total));
  LENS_RETURN_IF_ERROR(
      ReadContainers(spec, "initContainers", reader, true, &total));
  // Pod-level resources (PodLevelResources, 1.32+) replace the containers'
  // sum for cpu and memory.
  ResourceList extra;
  LENS_RETURN_IF_ERROR(reader.ReadResources(spec, "spec", true, &extra));
  for (const Amount& a : extra) {
    if (int64_t* v = Find(&total, a.name)) {
      *v = a.value;
    } else {
      total.push_back(a);
    }
  }
  extra.clear();
  LENS_RETURN_IF_ERROR(
      reader.ReadList(spec, "overhead", "spec", false, &extra));
  LENS_RETURN_IF_ERROR(Add(&total, extra));

  int64_t gpu_sum = 0, rdma_sum = 0, gpu_max = 0;
  for (const Amount& a : total) {
    if (a.name == "cpu") out->cpu_millis = a.value;
    if (a.name == "memory") out->memory_bytes = a.value;
    if (IsRdma(a.name) &&
        __builtin_add_overflow(rdma_sum, a.value, &rdma_sum)) {
      return InvalidArgumentError("spec: the rdma requests overflow");
    }
    if (!gpus.Matches(a.name)) continue;
    if (__builtin_add_overflow(gpu_sum, a.value, &gpu_sum)) {
      return InvalidArgumentError("spec: the GPU requests overflow");
    }
    // The largest; ties go to the first name in byte order, so the answer
    // does not depend on the order the JSON lists resources in.
    if (a.value > 0 && (a.value > gpu_max ||
                        (a.value == gpu_max && a.name < out->gpu_resource))) {
      gpu_max = a.value;
      out->gpu_resource = a.name;
    }
  }
  LENS_RETURN_IF_ERROR(ToInt32("GPUs", gpu_sum, &out->gpus));
  LENS_RETURN_IF_ERROR(ToInt32("rdma/*", rdma_sum, &out->rdma));
  out->gpu_vendor = GpuVendorOf(out->gpu_resource);
  return OkStatus();
}

}  // namespace lens::controller
