// Reference: Prometheus docs, querying/api.md ("Range queries", "Range
// vectors", "Expression query result formats").
#include "timeseries/promql_response.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/json_reader.h"
#include "core/text.h"
#include "timeseries/range.h"

namespace lens::timeseries {
namespace {

constexpr size_t kErrorTextBytes = 300;

Status Malformed(std::string_view server, std::string_view what) {
  return UnavailableError(
      "PromQL server " + std::string(server) +
      ": malformed query_range answer: " + std::string(what));
}

std::string StringOf(const rapidjson::Value& v) {
  return std::string(v.GetString(), v.GetStringLength());
}

// One [<unix seconds>, "<value>"] pair.
bool ReadPoint(const rapidjson::Value& pair, SamplePoint* out) {
  if (!pair.IsArray() || pair.Size() != 2 || !pair[0].IsNumber() ||
      !pair[1].IsString()) {
    return false;
  }
  out->timestamp_ms = std::llround(pair[0].GetDouble() * 1000);
  // strtod reads "NaN", "+Inf" and "-Inf" too; the string is
  // NUL-terminated (RapidJSON keeps it so).
  const char* text = pair[1].GetString();
  char* end = nullptr;
  out->value = std::strtod(text, &end);
  return end != text && *end == '\0';
}

StatusOr<SeriesSamples> ReadSeries(const rapidjson::Value& item,
                                   std::string_view metric, size_t index,
                                   std::string_view server) {
  const std::string where = "data.result[" + std::to_string(index) + "]";
  if (!item.IsObject()) return Malformed(server, where + " is not an object");
  SeriesSamples series;
  series.metric = std::string(metric);
  const rapidjson::Value* labels = JsonMember(item, "metric");
  if (labels && !labels->IsObject()) {
    return Malformed(server, where + ".metric is not an object");
  }
  if (labels) {
    for (const auto& m : labels->GetObject()) {
      if (!m.value.IsString()) {
        return Malformed(server, where + ".metric has a non-string value");
      }
      const std::string name = StringOf(m.name);
      if (name == "__name__" || m.value.GetStringLength() == 0) continue;
      series.labels.emplace_back(name, StringOf(m.value));
    }
  }
  std::sort(series.labels.begin(), series.labels.end());
  const rapidjson::Value* values = JsonMember(item, "values");
  if (!values || !values->IsArray()) {
    return Malformed(server, where + ".values is not an array");
  }
  series.points.reserve(values->Size());
  for (const auto& pair : values->GetArray()) {
    SamplePoint p;
    if (!ReadPoint(pair, &p)) {
      return Malformed(server, where + ".values has a bad point");
    }
    series.points.push_back(p);
  }
  return series;
}

}  // namespace

StatusOr<std::vector<SeriesSamples>> ParseQueryRangeResponse(
    std::string_view body, std::string_view metric, size_t max_series,
    std::string_view server) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseFullPrecisionFlag>(body.data(), body.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return Malformed(server, "not a JSON object");
  }
  const std::string status = JsonString(doc, "status");
  if (status == "error") {
    return UnavailableError("PromQL server " + std::string(server) +
                            " answered an error: " + PromQlErrorText(body));
  }
  if (status != "success") return Malformed(server, "no \"status\"");
  const rapidjson::Value* data = JsonMember(doc, "data");
  if (!data || !data->IsObject()) return Malformed(server, "no \"data\"");
  const std::string type = JsonString(*data, "resultType");
  if (type != "matrix") {
    return Malformed(server, "resultType \"" + type + "\", want \"matrix\"");
  }
  const rapidjson::Value* result = JsonMember(*data, "result");
  if (!result) return std::vector<SeriesSamples>{};
  if (!result->IsArray()) return Malformed(server, "data.result not an array");
  if (result->Size() > max_series) {
    return ResourceExhaustedError(
        "PromQL server " + std::string(server) + ": " +
        std::to_string(result->Size()) + " series of " + std::string(metric) +
        " match, more than max_series " + std::to_string(max_series) +
        "; add label matchers");
  }
  std::vector<SeriesSamples> out;
  out.reserve(result->Size());
  for (rapidjson::SizeType i = 0; i < result->Size(); ++i) {
    LENS_ASSIGN_OR_RETURN(SeriesSamples s,
                          ReadSeries((*result)[i], metric, i, server));
    if (!s.points.empty()) out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), SeriesLess);
  return out;
}

std::string PromQlErrorText(std::string_view body) {
  rapidjson::Document doc;
  doc.Parse(body.data(), body.size());
  std::string text;
  if (!doc.HasParseError() && doc.IsObject()) {
    const std::string type = JsonString(doc, "errorType");
    const std::string error = JsonString(doc, "error");
    if (!error.empty()) text = type.empty() ? error : type + ": " + error;
  }
  if (text.empty()) text = std::string(body);
  if (text.size() > kErrorTextBytes) {
    text.resize(kErrorTextBytes);
    text += "...";
  }
  // One line of valid UTF-8 in a message.
  std::replace(text.begin(), text.end(), '\n', ' ');
  return ValidUtf8(text);
}

}  // namespace lens::timeseries
