// Reading amd-smi's JSON values with their path, for error messages that say
// which field was bad ("gpu_data[2].power.socket_power.value: expected a
// number, got \"abc\""). The only place RapidJSON types appear in the amd-smi
// parser's internal interfaces.
#ifndef LENS_GPU_AMD_SMI_JSON_FIELD_H_
#define LENS_GPU_AMD_SMI_JSON_FIELD_H_

#include <rapidjson/document.h>

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "lens/status.h"

namespace lens::amd_smi {

// One JSON value (or its absence) and the path that leads to it. Cheap to
// copy; points into a document that must outlive it.
struct Field {
  const rapidjson::Value* value = nullptr;  // nullptr: absent
  std::string path;

  bool absent() const { return value == nullptr; }
  // Absent, null, or amd-smi's "N/A" (and "" which it prints for N/A in
  // some fields): the field is not reported.
  bool NotReported() const;
  // Member `key` of this object (absent when this is not an object or has
  // no such member); the path grows by ".key".
  Field operator[](std::string_view key) const;
};

// "<path>: expected <what>, got <a short description of the value>".
Status TypeError(const Field& field, std::string_view what);

// A path of up to three member names below a GPU object; unused trailing
// entries are empty. Tables of fields are written with these.
using MemberPath = std::array<std::string_view, 3>;

// Follows `path` from `root`. An intermediate member that is absent or not
// reported ("usage": "N/A") makes the result absent; one that is neither an
// object nor "N/A" is an error.
StatusOr<Field> Walk(const Field& root, const MemberPath& path);

// A unit amd-smi prints and its factor to the base unit.
struct UnitScale {
  std::string_view unit;
  double scale;
};

// What a quantity field may hold: its units, and the factor for a plain
// number without a unit (amd-smi's implied unit for that field).
struct Quantity {
  std::string_view kind;  // "a power unit", for messages
  std::span<const UnitScale> units;
  double unitless_scale;
};

extern const Quantity kWatts;          // W, mW, uW
extern const Quantity kCelsius;        // C, °C
extern const Quantity kHertz;          // Hz .. GHz; plain numbers are MHz
extern const Quantity kPercent;        // % -> ratio 0..1; plain numbers are %
extern const Quantity kJoules;         // J, mJ, uJ, kJ
extern const Quantity kGigaTransfers;  // GT/s
extern const Quantity kBytesMiB;       // B .. TiB; plain numbers are MiB
extern const Quantity kBytes;          // B .. TiB; plain numbers are bytes

// A number, a numeric string, {"value": <number|"N/A">, "unit": "<unit>"},
// or not reported (nullopt), converted to the quantity's base unit.
StatusOr<std::optional<double>> ReadQuantity(const Field& field,
                                             const Quantity& quantity);
// ReadQuantity for a byte count, rounded to whole bytes; negative values are
// an error.
StatusOr<std::optional<uint64_t>> ReadByteCount(const Field& field,
                                                const Quantity& quantity);
// A non-negative integer (a number or a decimal string), or nullopt.
StatusOr<std::optional<uint64_t>> ReadCount(const Field& field);
// An integer that fits an int (may be negative), or nullopt.
StatusOr<std::optional<int>> ReadInt(const Field& field);
// A PCI id: "0x1002" or a number, at most 0xffff; or nullopt.
StatusOr<std::optional<uint16_t>> ReadPciId(const Field& field);
// A string, "" when not reported; numbers are not strings (error).
StatusOr<std::string> ReadText(const Field& field);
// A PCI address "dddd:bb:dd.f" in lower case, "" when not reported.
StatusOr<std::string> ReadBdf(const Field& field);

}  // namespace lens::amd_smi

#endif  // LENS_GPU_AMD_SMI_JSON_FIELD_H_
