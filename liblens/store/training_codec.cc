#include "store/training_codec.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/json.h"
#include "store/text.h"

namespace lens::store {
// All fields of a record as one JSON object (the `fields` column). Non-finite
// values are the strings "nan", "inf", "-inf" (JSON has no such numbers;
// docs/storage.md).
std::string FieldsJson(const IterationRecord& r) {
  std::string out;
  out.reserve(256);
  JsonWriter w(&out, {.non_finite_as_strings = true});
  w.StartObject();
  for (const IterationFieldInfo& info : IterationFields()) {
    if (auto v = r.Get(info.field)) w.Member(info.name, *v);
  }
  for (const auto& [k, v] : r.extra) w.Member(k, v);
  w.EndObject();
  return out;
}

std::string ExtraJson(
    const std::vector<std::pair<std::string, double>>& extra) {
  JsonWriter w({.non_finite_as_strings = true});
  w.StartObject();
  for (const auto& [k, v] : extra) w.Member(k, v);
  w.EndObject();
  return w.Take();
}

// Calls `f(name, value)` for each member of a JSON object whose value is a
// number or a non-finite value's string ("nan", "inf", "-inf").
template <typename F>
void ForEachNumber(std::string_view json, F f) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (!doc.IsObject()) return;
  for (auto it = doc.MemberBegin(); it != doc.MemberEnd(); ++it) {
    double v;
    if (it->value.IsNumber()) {
      v = it->value.GetDouble();
    } else if (it->value.IsString()) {
      v = std::strtod(it->value.GetString(), nullptr);
    } else {
      continue;
    }
    f(std::string_view(it->name.GetString(), it->name.GetStringLength()), v);
  }
}

void ReadExtra(std::string_view json,
               std::vector<std::pair<std::string, double>>* extra) {
  ForEachNumber(json, [&](std::string_view name, double v) {
    extra->emplace_back(std::string(name), v);
  });
}

void ReadFields(std::string_view json, IterationRecord* r) {
  ForEachNumber(json, [&](std::string_view name, double v) {
    bool known = false;
    for (const IterationFieldInfo& info : IterationFields()) {
      if (info.name == name) {
        r->Set(info.field, v);
        known = true;
        break;
      }
    }
    if (!known) r->extra.emplace_back(std::string(name), v);
  });
}

std::optional<int64_t> TimeUs(std::optional<double> seconds) {
  if (!seconds || !std::isfinite(*seconds)) return std::nullopt;
  return static_cast<int64_t>(std::llround(*seconds * 1e6));
}

// Identity of a parser run: the source, the local run number and the first
// line of the run (its number, iteration and time), so the same log gives
// the same fingerprints and a different log (a restart) new ones.
std::string Fingerprint(std::string_view source, int32_t local_run,
                        uint64_t line, std::optional<int64_t> iteration,
                        std::optional<double> ts) {
  std::string s(source);
  s += '\n' + std::to_string(local_run) + '\n' + std::to_string(line) + '\n';
  if (iteration) s += std::to_string(*iteration);
  s += '\n';
  if (auto us = TimeUs(ts)) s += std::to_string(*us);
  return HexDigest64(s);
}

std::string_view EventKey(const TrainingEvent& e, std::string* buf) {
  switch (e.type) {
    case TrainingEventType::kCheckpointSaveStart:
    case TrainingEventType::kCheckpointSaveEnd:
      *buf = (e.iteration ? std::to_string(*e.iteration) : std::string("-")) +
             ":" + e.path;
      SanitizeUtf8(buf);  // the same bytes as the stored path
      return *buf;
    default:
      return "";
  }
}

TrainingEventType EventTypeFromName(std::string_view s) {
  for (auto t : {TrainingEventType::kTrainingStart,
                 TrainingEventType::kCheckpointSaveStart,
                 TrainingEventType::kCheckpointSaveEnd,
                 TrainingEventType::kTrainingEnd}) {
    if (TrainingEventTypeName(t) == s) return t;
  }
  return TrainingEventType::kTrainingStart;
}

TrainingFormat FormatFromName(std::string_view s) {
  for (int f = 0; f <= static_cast<int>(TrainingFormat::kDeepSpeed); ++f) {
    if (TrainingFormatName(static_cast<TrainingFormat>(f)) == s) {
      return static_cast<TrainingFormat>(f);
    }
  }
  return TrainingFormat::kUnknown;
}

}  // namespace lens::store
