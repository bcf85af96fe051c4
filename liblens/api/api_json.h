// The JSON shapes of the REST API's resources (camelCase keys, Unix
// seconds). Only the fields listed here leave Lens: labels, environment and
// anything else that could hold a secret are never written.
#ifndef LENS_API_API_JSON_H_
#define LENS_API_API_JSON_H_

#include <optional>
#include <string_view>

#include "api/routes.h"
#include "lens/model.h"
#include "lens/training.h"

namespace lens::api {

// Whole seconds since the epoch (floored), as the API writes times.
int64_t UnixSeconds(Timestamp at);

void Str(JsonWriter& w, const char* key, std::string_view value);
void Int(JsonWriter& w, const char* key, int64_t value);
// null for a missing or non-finite value.
void Num(JsonWriter& w, const char* key, std::optional<double> value);
void Time(JsonWriter& w, const char* key, std::optional<Timestamp> at);

// Opens {"items":[ ...; ClosePage closes it with the totals.
void OpenPage(JsonWriter& w);
void ClosePage(JsonWriter& w, int64_t total, int32_t page_num,
               int32_t page_size);

void WriteNode(JsonWriter& w, const NodeRecord& n);
void WriteGpu(JsonWriter& w, const GpuDeviceRecord& g);
void WriteRdma(JsonWriter& w, const RdmaDeviceRecord& r);
void WriteDeviceChange(JsonWriter& w, const DeviceChangeRecord& c);
void WriteContainer(JsonWriter& w, const ContainerRecord& c);
void WritePod(JsonWriter& w, const PodRecord& p);
void WriteWorkload(JsonWriter& w, const WorkloadRecord& wl);
void WriteRun(JsonWriter& w, const TrainingRunRecord& r);
void WriteIteration(JsonWriter& w, const IterationRecord& it);
void WriteTrainingEvent(JsonWriter& w, const TrainingEvent& e);
void WriteStorage(JsonWriter& w, const StorageRecord& s);

}  // namespace lens::api

#endif  // LENS_API_API_JSON_H_
