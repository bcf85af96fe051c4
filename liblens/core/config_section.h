// What an area declares about its section of the configuration file: the
// keys, each with its decoder, and what needs the whole section. The area
// owns its section's struct, defaults, decoding and rules across keys
// (<area>/config.h); the composition (service/config.h) registers every
// section under its name; core (config.h) reads the file, applies the
// environment and the flags over it and names where a bad value came from.
// Light on purpose: no YAML here (config_decode.h has the decoding toolkit).
#ifndef LENS_CORE_CONFIG_SECTION_H_
#define LENS_CORE_CONFIG_SECTION_H_

#include <span>
#include <string>
#include <string_view>

#include "lens/status.h"

namespace YAML {
class Node;
}  // namespace YAML

namespace lens::config {

struct Ctx;

// One key of a map-valued section: how to decode its value into the section
// struct S.
template <typename S>
struct FieldRule {
  std::string_view key;
  Status (*decode)(const Ctx& ctx, const YAML::Node& value,
                   const std::string& path, S* out);
};

// A section as its area declares it (`constinit const SectionSpec<S>` in the
// area's config.cc, so its address and contents are fixed before any
// dynamic initialisation).
template <typename S>
struct SectionSpec {
  // The key in the file: "nodeExporter".
  std::string_view name;
  // One rule per key; each key can also be set from the environment
  // (LENS_<SECTION>_<KEY>) and from a daemon's flag.
  std::span<const FieldRule<S>> rules;
  // Checks that need the whole section, run after every key is decoded
  // (null: none beyond S::Validate, which the composition runs).
  Status (*after)(const Ctx& ctx, const YAML::Node& section,
                  const std::string& path, S* out) = nullptr;
};

}  // namespace lens::config

#endif  // LENS_CORE_CONFIG_SECTION_H_
