// How training records and events map to rows (docs/storage.md): the
// `fields` JSON column, run fingerprints, event keys.
#ifndef LENS_STORE_TRAINING_CODEC_H_
#define LENS_STORE_TRAINING_CODEC_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lens/status.h"
#include "lens/training.h"
#include "store/db.h"

namespace lens::store {

// Every present field and extra of `r` as a JSON object; non-finite values
// are the strings "nan", "inf", "-inf".
std::string FieldsJson(const IterationRecord& r);
// The inverse: sets known fields, appends unknown names to r->extra.
void ReadFields(std::string_view json, IterationRecord* r);

// Named values (ValidationRecord::extra) as a JSON object, and back.
std::string ExtraJson(const std::vector<std::pair<std::string, double>>& extra);
void ReadExtra(std::string_view json,
               std::vector<std::pair<std::string, double>>* extra);

// Unix seconds -> microseconds; nullopt for absent or non-finite.
std::optional<int64_t> TimeUs(std::optional<double> seconds);

// A parser run's identity: source, local run number, and the run's first
// line (number, iteration, time).
std::string Fingerprint(std::string_view source, int32_t local_run,
                        uint64_t line, std::optional<int64_t> iteration,
                        std::optional<double> ts);

// The event's part of its unique key within (workload, run, type):
// "iteration:path" for checkpoint events, "" otherwise. `buf` holds it.
std::string_view EventKey(const TrainingEvent& e, std::string* buf);

TrainingEventType EventTypeFromName(std::string_view s);

TrainingFormat FormatFromName(std::string_view s);

}  // namespace lens::store

#endif  // LENS_STORE_TRAINING_CODEC_H_
