#include "gpu/amd_smi/json_field.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "core/kernel_file.h"

namespace lens::amd_smi {
namespace {

// Units as amd-smi prints them ("Mhz" appears in its voltage curve output).
constexpr UnitScale kWattUnits[] = {{"W", 1.0}, {"mW", 1e-3}, {"uW", 1e-6}};
constexpr UnitScale kCelsiusUnits[] = {{"C", 1.0},
                                       {"\xc2\xb0"
                                        "C",
                                        1.0}};
constexpr UnitScale kHertzUnits[] = {{"Hz", 1.0},  {"KHz", 1e3}, {"kHz", 1e3},
                                     {"MHz", 1e6}, {"Mhz", 1e6}, {"GHz", 1e9}};
constexpr UnitScale kPercentUnits[] = {{"%", 0.01}};
constexpr UnitScale kJouleUnits[] = {
    {"J", 1.0}, {"mJ", 1e-3}, {"uJ", 1e-6}, {"kJ", 1e3}};
constexpr UnitScale kGtUnits[] = {{"GT/s", 1.0}};
// amd-smi divides byte counts by 1024 per step and calls the result KB/MB/GB.
constexpr UnitScale kByteUnits[] = {{"B", 1.0},
                                    {"KB", 1024.0},
                                    {"KiB", 1024.0},
                                    {"MB", 1048576.0},
                                    {"MiB", 1048576.0},
                                    {"GB", 1073741824.0},
                                    {"GiB", 1073741824.0},
                                    {"TB", 1099511627776.0},
                                    {"TiB", 1099511627776.0}};

std::string Quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text.substr(0, 48)) {
    out += (static_cast<unsigned char>(c) < 0x20) ? '?' : c;
  }
  if (text.size() > 48) out += "...";
  return out + "\"";
}

std::string Describe(const rapidjson::Value& v) {
  if (v.IsString()) return Quoted({v.GetString(), v.GetStringLength()});
  if (v.IsObject()) return "an object";
  if (v.IsArray()) return "an array";
  if (v.IsBool()) return v.GetBool() ? "true" : "false";
  if (v.IsNull()) return "null";
  if (v.IsInt64()) return std::to_string(v.GetInt64());
  if (v.IsUint64()) return std::to_string(v.GetUint64());
  return std::to_string(v.GetDouble());
}

// A finite number written as text ("750", " 1.5e3 "); nullopt otherwise.
std::optional<double> NumberFromText(std::string_view text) {
  std::string copy(TrimKernelValue(text));
  if (copy.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  double x = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || errno != 0 || !std::isfinite(x)) {
    return std::nullopt;
  }
  return x;
}

StatusOr<double> Number(const Field& f) {
  if (f.value->IsNumber()) return f.value->GetDouble();
  if (f.value->IsString()) {
    auto x = NumberFromText({f.value->GetString(), f.value->GetStringLength()});
    if (x) return *x;
  }
  return TypeError(f, "a number");
}

// The factor of the "unit" member of a {"value", "unit"} object.
StatusOr<double> UnitFactor(const Field& object, const Quantity& quantity) {
  Field unit = object["unit"];
  if (unit.absent()) return quantity.unitless_scale;
  if (!unit.value->IsString()) return TypeError(unit, "a unit string");
  std::string_view name(unit.value->GetString(), unit.value->GetStringLength());
  if (name.empty()) return quantity.unitless_scale;
  for (const UnitScale& u : quantity.units) {
    if (u.unit == name) return u.scale;
  }
  return InvalidArgumentError(unit.path + ": unit " + Quoted(name) +
                              " is not " + std::string(quantity.kind));
}

}  // namespace

const Quantity kWatts{"a power unit", kWattUnits, 1.0};
const Quantity kCelsius{"a temperature unit", kCelsiusUnits, 1.0};
const Quantity kHertz{"a frequency unit", kHertzUnits, 1e6};
const Quantity kPercent{"a percentage", kPercentUnits, 0.01};
const Quantity kJoules{"an energy unit", kJouleUnits, 1.0};
const Quantity kGigaTransfers{"a link speed unit", kGtUnits, 1.0};
const Quantity kBytesMiB{"a memory unit", kByteUnits, 1048576.0};
const Quantity kBytes{"a memory unit", kByteUnits, 1.0};

bool Field::NotReported() const {
  if (value == nullptr || value->IsNull()) return true;
  if (!value->IsString()) return false;
  std::string_view s(value->GetString(), value->GetStringLength());
  return s == "N/A" || s.empty();
}

Field Field::operator[](std::string_view key) const {
  std::string child_path =
      path.empty() ? std::string(key) : path + "." + std::string(key);
  if (value == nullptr || !value->IsObject()) return {nullptr, child_path};
  auto it = value->FindMember(
      rapidjson::Value(rapidjson::StringRef(key.data(), key.size())));
  if (it == value->MemberEnd()) return {nullptr, child_path};
  return {&it->value, child_path};
}

Status TypeError(const Field& field, std::string_view what) {
  std::string got = field.absent() ? "nothing" : Describe(*field.value);
  return InvalidArgumentError(field.path + ": expected " + std::string(what) +
                              ", got " + got);
}

StatusOr<Field> Walk(const Field& root, const MemberPath& path) {
  Field current = root;
  for (size_t i = 0; i < path.size() && !path[i].empty(); ++i) {
    if (i > 0 && current.NotReported()) return current[path[i]];
    if (i > 0 && !current.value->IsObject()) {
      return TypeError(current, "an object or \"N/A\"");
    }
    current = current[path[i]];
  }
  return current;
}

StatusOr<std::optional<double>> ReadQuantity(const Field& field,
                                             const Quantity& quantity) {
  if (field.NotReported()) return std::optional<double>();
  if (!field.value->IsObject()) {
    LENS_ASSIGN_OR_RETURN(double x, Number(field));
    return std::optional<double>(x * quantity.unitless_scale);
  }
  Field value = field["value"];
  if (value.absent()) {
    return TypeError(field, "a number, \"N/A\" or {\"value\", \"unit\"}");
  }
  LENS_ASSIGN_OR_RETURN(double scale, UnitFactor(field, quantity));
  if (value.NotReported()) return std::optional<double>();
  LENS_ASSIGN_OR_RETURN(double x, Number(value));
  return std::optional<double>(x * scale);
}

StatusOr<std::optional<uint64_t>> ReadByteCount(const Field& field,
                                                const Quantity& quantity) {
  LENS_ASSIGN_OR_RETURN(std::optional<double> x, ReadQuantity(field, quantity));
  if (!x) return std::optional<uint64_t>();
  if (*x < 0 || *x >= 1.8e19) return TypeError(field, "a size in bytes");
  return std::optional<uint64_t>(static_cast<uint64_t>(std::llround(*x)));
}

StatusOr<std::optional<uint64_t>> ReadCount(const Field& field) {
  if (field.NotReported()) return std::optional<uint64_t>();
  const rapidjson::Value& v = *field.value;
  if (v.IsUint64()) return std::optional<uint64_t>(v.GetUint64());
  if (v.IsDouble() && v.GetDouble() >= 0 && v.GetDouble() < 1.8e19 &&
      std::floor(v.GetDouble()) == v.GetDouble()) {
    return std::optional<uint64_t>(static_cast<uint64_t>(v.GetDouble()));
  }
  if (v.IsString()) {
    std::string_view text =
        TrimKernelValue({v.GetString(), v.GetStringLength()});
    uint64_t n = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec == std::errc() && end == text.data() + text.size() &&
        !text.empty()) {
      return std::optional<uint64_t>(n);
    }
  }
  return TypeError(field, "a non-negative integer");
}

StatusOr<std::optional<int>> ReadInt(const Field& field) {
  if (field.NotReported()) return std::optional<int>();
  const rapidjson::Value& v = *field.value;
  if (v.IsInt()) return std::optional<int>(v.GetInt());
  if (v.IsString()) {
    std::string_view text =
        TrimKernelValue({v.GetString(), v.GetStringLength()});
    int n = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec == std::errc() && end == text.data() + text.size() &&
        !text.empty()) {
      return std::optional<int>(n);
    }
  }
  return TypeError(field, "an integer");
}

StatusOr<std::optional<uint16_t>> ReadPciId(const Field& field) {
  if (field.NotReported()) return std::optional<uint16_t>();
  const rapidjson::Value& v = *field.value;
  std::optional<uint64_t> id;
  if (v.IsUint64()) id = v.GetUint64();
  if (v.IsString()) {
    auto parsed =
        ParseKernelUint64({v.GetString(), v.GetStringLength()}, field.path);
    if (parsed.ok()) id = *parsed;
  }
  if (!id || *id > 0xffff) return TypeError(field, "a PCI id (\"0x1002\")");
  return std::optional<uint16_t>(static_cast<uint16_t>(*id));
}

StatusOr<std::string> ReadText(const Field& field) {
  if (field.NotReported()) return std::string();
  if (!field.value->IsString()) return TypeError(field, "a string");
  return std::string(TrimKernelValue(
      {field.value->GetString(), field.value->GetStringLength()}));
}

StatusOr<std::string> ReadBdf(const Field& field) {
  LENS_ASSIGN_OR_RETURN(std::string bdf, ReadText(field));
  if (bdf.empty()) return bdf;
  std::transform(bdf.begin(), bdf.end(), bdf.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  // dddd:bb:dd.f; the domain may be longer than 4 digits (VMD domains).
  size_t domain = bdf.find(':');
  bool ok = domain >= 4 && domain <= 8 && bdf.size() == domain + 8 &&
            bdf[domain + 3] == ':' && bdf[domain + 6] == '.' &&
            bdf.back() >= '0' && bdf.back() <= '7';
  for (size_t i = 0; ok && i + 1 < bdf.size(); ++i) {
    if (i == domain || i == domain + 3 || i == domain + 6) continue;
    ok = std::isxdigit(static_cast<unsigned char>(bdf[i])) != 0;
  }
  if (!ok) return TypeError(field, "a PCI address (\"0000:0c:00.0\")");
  return bdf;
}

}  // namespace lens::amd_smi
