// Parsers for amdgpu's text attributes. Formats follow the driver's
// printers: amdgpu_pm.c / smu_cmn print_clk_levels ("%d: %uMhz %s\n"),
// smu_v13_0_6 (MI300: "S: %uMhz *\n" in deep sleep), the PCI core's link
// speed strings ("16.0 GT/s PCIe"), and amdgpu_ras.c ("%s: %lu\n" for ue, ce
// and, newer, de).
#include <charconv>
#include <system_error>

#include "gpu/amdgpu_sysfs.h"

namespace lens {
namespace {

// Splits off the first line of `*text` (without its '\n').
std::string_view NextLine(std::string_view* text) {
  size_t end = text->find('\n');
  std::string_view line = text->substr(0, end);
  *text = end == std::string_view::npos ? std::string_view()
                                        : text->substr(end + 1);
  return line;
}

bool ConsumePrefix(std::string_view* text, std::string_view prefix) {
  if (text->substr(0, prefix.size()) != prefix) return false;
  text->remove_prefix(prefix.size());
  return true;
}

void SkipSpaces(std::string_view* text) {
  while (!text->empty() && (text->front() == ' ' || text->front() == '\t')) {
    text->remove_prefix(1);
  }
}

// Parses a leading decimal number (integer or with a fraction) off `*text`.
std::optional<double> ConsumeNumber(std::string_view* text) {
  double value = 0;
  auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(),
                                   value, std::chars_format::fixed);
  if (ec != std::errc() || ptr == text->data()) return std::nullopt;
  text->remove_prefix(static_cast<size_t>(ptr - text->data()));
  return value;
}

std::optional<uint64_t> ConsumeUint(std::string_view* text) {
  uint64_t value = 0;
  auto [ptr, ec] =
      std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || ptr == text->data()) return std::nullopt;
  text->remove_prefix(static_cast<size_t>(ptr - text->data()));
  return value;
}

// "1900Mhz" (amdgpu prints "Mhz"; "MHz" is accepted too) -> hertz.
std::optional<double> ParseMhz(std::string_view text) {
  std::optional<double> mhz = ConsumeNumber(&text);
  if (!mhz) return std::nullopt;
  SkipSpaces(&text);
  if (text.size() < 3) return std::nullopt;
  std::string_view unit = text.substr(0, 3);
  if (unit != "Mhz" && unit != "MHz" && unit != "mhz") return std::nullopt;
  return *mhz * 1e6;
}

}  // namespace

std::optional<double> ParseDpmCurrentHz(std::string_view text) {
  while (!text.empty()) {
    std::string_view line = TrimKernelValue(NextLine(&text));
    if (line.empty() || line.back() != '*') continue;
    // "<level>: <clock>Mhz *", the level being a number or "S" (sleep).
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    std::string_view value = line.substr(colon + 1);
    SkipSpaces(&value);
    return ParseMhz(value);
  }
  return std::nullopt;
}

std::optional<double> ParseLinkSpeedGtps(std::string_view text) {
  text = TrimKernelValue(text);
  std::optional<double> speed = ConsumeNumber(&text);
  if (!speed) return std::nullopt;
  SkipSpaces(&text);
  if (!ConsumePrefix(&text, "GT/s")) return std::nullopt;
  return *speed;
}

std::optional<RasCounts> ParseRasCounts(std::string_view text) {
  std::optional<uint64_t> ue;
  std::optional<uint64_t> ce;
  while (!text.empty()) {
    std::string_view line = TrimKernelValue(NextLine(&text));
    std::optional<uint64_t>* target = nullptr;
    if (ConsumePrefix(&line, "ue:")) {
      target = &ue;
    } else if (ConsumePrefix(&line, "ce:")) {
      target = &ce;
    } else {
      continue;  // "de: N" and anything a later kernel adds
    }
    SkipSpaces(&line);
    std::optional<uint64_t> value = ConsumeUint(&line);
    if (!value || !line.empty()) return std::nullopt;
    *target = value;
  }
  if (!ue || !ce) return std::nullopt;
  return RasCounts{*ue, *ce};
}

}  // namespace lens
