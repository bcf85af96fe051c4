// Output formats of training records: JSON lines, CSV, a fixed-width table and
// the summary.
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "core/json.h"
#include "core/text.h"
#include "lens/training.h"

namespace lens {
namespace {

void AppendInt(int64_t v, std::string* out);

// Integral values of integer fields print as integers (8, not 8e+00 or
// 1e+15), in CSV and JSON alike.
bool PrintsAsInteger(double v, bool integer) {
  return integer && std::isfinite(v) && std::fabs(v) < 9.0e15 &&
         v == std::floor(v);
}

// The rest in the shortest round-trip form, non-finite values as the strings
// "nan", "inf", "-inf" (JSON has no such numbers).
void AppendNumber(double v, bool integer, std::string* out) {
  if (PrintsAsInteger(v, integer)) {
    AppendInt(static_cast<int64_t>(v), out);
    return;
  }
  AppendDouble(v, NonFinite::kJsonString, out);
}

void AppendInt(int64_t v, std::string* out) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, r.ptr);
}

std::string Fixed(std::optional<double> v, int precision) {
  if (!v) return "-";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", precision, *v);
  return buf;
}

std::string Scientific(std::optional<double> v) {
  if (!v) return "-";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.4g", *v);
  return buf;
}

// Training items keep NaN and the infinities (a loss that went NaN is the
// news), as the strings "nan", "inf", "-inf".
constexpr JsonWriter::Options kItemJson{.non_finite_as_strings = true};

// A value: as an integer where PrintsAsInteger, else as any double.
void Number(JsonWriter& w, double v, bool integer) {
  if (PrintsAsInteger(v, integer)) {
    w.Int64(static_cast<int64_t>(v));
  } else {
    w.Double(v);
  }
}

void Optional(JsonWriter& w, std::string_view key, std::optional<double> v) {
  if (v) w.Member(key, *v);
}

void OptionalInt(JsonWriter& w, std::string_view key,
                 std::optional<int64_t> v) {
  if (v) w.Member(key, *v);
}

void Extra(JsonWriter& w,
           const std::vector<std::pair<std::string, double>>& extra) {
  if (extra.empty()) return;
  w.Key("extra");
  w.StartObject();
  for (const auto& [key, value] : extra) w.Member(key, value);
  w.EndObject();
}

// Opens the item with the keys every item starts with: type, run, line,
// format.
void Head(JsonWriter& w, std::string_view type, int32_t run, uint64_t line,
          TrainingFormat format) {
  w.StartObject();
  w.Member("type", type);
  w.Member("run", run);
  w.Member("line", uint64_t{line});
  w.Member("format", TrainingFormatName(format));
}

}  // namespace

void AppendJson(const ValidationRecord& v, std::string* out) {
  JsonWriter w(out, kItemJson);
  Head(w, "validation", v.run, v.line, v.format);
  w.Member("iteration", v.iteration);
  Optional(w, "timestamp", v.timestamp_s);
  w.Member("split", EvaluationSplitName(v.split));
  if (v.end_of_training) w.Member("end_of_training", true);
  Optional(w, "loss", v.loss);
  Optional(w, "perplexity", v.perplexity);
  Extra(w, v.extra);
  w.EndObject();
}

void AppendJson(const MemoryReport& m, std::string* out) {
  JsonWriter w(out, kItemJson);
  Head(w, "memory_report", m.run, m.line, m.format);
  OptionalInt(w, "iteration", m.iteration);
  Optional(w, "timestamp", m.timestamp_s);
  w.Member("rank", m.rank);
  w.Member("context", m.context);
  Optional(w, "allocated_mb", m.allocated_mb);
  Optional(w, "max_allocated_mb", m.max_allocated_mb);
  Optional(w, "reserved_mb", m.reserved_mb);
  Optional(w, "max_reserved_mb", m.max_reserved_mb);
  w.EndObject();
}

void AppendJson(const IterationRecord& r, std::string* out) {
  JsonWriter w(out, kItemJson);
  w.StartObject();
  w.Member("type", "iteration");
  w.Member("run", r.run);
  w.Member("iteration", r.iteration);
  w.Member("line", uint64_t{r.line});
  w.Member("format", TrainingFormatName(r.format));
  Optional(w, "timestamp", r.timestamp_s);
  OptionalInt(w, "rank", r.rank);
  OptionalInt(w, "world_size", r.world_size);
  for (const IterationFieldInfo& f : IterationFields()) {
    if (auto v = r.Get(f.field)) {
      w.Key(f.name);
      Number(w, *v, f.integer);
    }
  }
  Extra(w, r.extra);
  w.EndObject();
}

void AppendJson(const TrainingEvent& e, std::string* out) {
  JsonWriter w(out, kItemJson);
  Head(w, TrainingEventTypeName(e.type), e.run, e.line, e.format);
  OptionalInt(w, "iteration", e.iteration);
  Optional(w, "timestamp", e.timestamp_s);
  Optional(w, "duration_s", e.duration_s);
  if (!e.path.empty()) w.Member("path", e.path);
  w.EndObject();
}

void AppendJson(const RunSummary& s, std::string* out) {
  JsonWriter w(out, kItemJson);
  w.StartObject();
  w.Member("type", "run_summary");
  w.Member("run", s.run);
  w.Member("format", TrainingFormatName(s.format));
  w.Member("iterations", uint64_t{s.iterations});
  OptionalInt(w, "first_iteration", s.first_iteration);
  OptionalInt(w, "last_iteration", s.last_iteration);
  OptionalInt(w, "target_iteration", s.target_iteration);
  Optional(w, "step_ms_p10", s.step_ms_p10);
  Optional(w, "step_ms_p50", s.step_ms_p50);
  Optional(w, "step_ms_p90", s.step_ms_p90);
  Optional(w, "tflops_per_gpu_p50", s.tflops_per_gpu_p50);
  Optional(w, "tokens_per_s_per_gpu_p50", s.tokens_per_s_per_gpu_p50);
  Optional(w, "first_loss", s.first_loss);
  Optional(w, "last_loss", s.last_loss);
  w.Member("nan_loss_records", uint64_t{s.nan_loss_records});
  w.Member("nan_iterations", uint64_t{s.nan_iterations});
  w.Member("skipped_iterations", uint64_t{s.skipped_iterations});
  w.Member("checkpoints", uint64_t{s.checkpoints});
  w.Member("validations", uint64_t{s.validations});
  OptionalInt(w, "last_validation_iteration", s.last_validation_iteration);
  Optional(w, "last_validation_loss", s.last_validation_loss);
  w.Member("ended", s.ended);
  w.EndObject();
}

std::string CsvHeader() {
  std::string h = "run,iteration,line,format,timestamp,rank";
  for (const IterationFieldInfo& f : IterationFields()) {
    h.push_back(',');
    h.append(f.name);
  }
  h.push_back('\n');
  return h;
}

void AppendCsvRow(const IterationRecord& r, std::string* out) {
  AppendInt(r.run, out);
  out->push_back(',');
  AppendInt(r.iteration, out);
  out->push_back(',');
  AppendInt(static_cast<int64_t>(r.line), out);
  out->push_back(',');
  out->append(TrainingFormatName(r.format));
  out->push_back(',');
  if (r.timestamp_s) AppendNumber(*r.timestamp_s, false, out);
  out->push_back(',');
  if (r.rank) AppendInt(*r.rank, out);
  for (const IterationFieldInfo& f : IterationFields()) {
    out->push_back(',');
    if (auto v = r.Get(f.field)) {
      if (std::isfinite(*v)) {
        AppendNumber(*v, f.integer, out);
      } else {
        out->append(std::isnan(*v) ? "nan" : (*v > 0 ? "inf" : "-inf"));
      }
    }
  }
  out->push_back('\n');
}

std::string TableHeader() {
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "%4s %10s %10s %11s %10s %9s %12s %10s %8s %9s\n", "run",
                "iteration", "target", "loss", "step_ms", "tflops",
                "tokens/s/gpu", "lr", "grad", "mem_gb");
  return buf;
}

void AppendTableRow(const IterationRecord& r, std::string* out) {
  auto target = r.Get(IterationField::kTargetIteration);
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "%4d %10" PRId64 " %10s %11s %10s %9s %12s %10s %8s %9s\n",
                r.run, r.iteration, target ? Fixed(target, 0).c_str() : "-",
                Scientific(r.Get(IterationField::kLoss)).c_str(),
                Fixed(r.Get(IterationField::kElapsedMs), 1).c_str(),
                Fixed(r.Get(IterationField::kTflopsPerGpu), 1).c_str(),
                Fixed(r.Get(IterationField::kTokensPerSPerGpu), 1).c_str(),
                Scientific(r.Get(IterationField::kLearningRate)).c_str(),
                Fixed(r.Get(IterationField::kGradNorm), 3).c_str(),
                Fixed(r.Get(IterationField::kMemUsedGb), 2).c_str());
  out->append(buf);
}

std::string FormatSummary(const std::vector<RunSummary>& runs,
                          const TrainingParserStats& stats,
                          uint64_t dropped_runs) {
  std::string out;
  char buf[512];
  if (runs.empty()) out.append("no training records or events found\n");
  if (dropped_runs > 0) {
    std::snprintf(buf, sizeof(buf),
                  "(%" PRIu64
                  " earlier runs not summarised; the latest %zu "
                  "follow)\n",
                  dropped_runs, runs.size());
    out.append(buf);
  }
  for (const RunSummary& s : runs) {
    std::string range = "-";
    if (s.first_iteration) {
      range = std::to_string(*s.first_iteration) + ".." +
              std::to_string(*s.last_iteration);
      if (s.target_iteration)
        range += " of " + std::to_string(*s.target_iteration);
    }
    std::snprintf(buf, sizeof(buf),
                  "run %d (%s): %" PRIu64 " iterations, %s%s\n", s.run,
                  std::string(TrainingFormatName(s.format)).c_str(),
                  s.iterations, range.c_str(), s.ended ? ", ended" : "");
    out.append(buf);
    std::snprintf(buf, sizeof(buf), "  step time ms   p10 %s  p50 %s  p90 %s\n",
                  Fixed(s.step_ms_p10, 1).c_str(),
                  Fixed(s.step_ms_p50, 1).c_str(),
                  Fixed(s.step_ms_p90, 1).c_str());
    out.append(buf);
    std::snprintf(buf, sizeof(buf),
                  "  TFLOP/s/GPU   p50 %s    tokens/s/GPU p50 %s\n",
                  Fixed(s.tflops_per_gpu_p50, 1).c_str(),
                  Fixed(s.tokens_per_s_per_gpu_p50, 1).c_str());
    out.append(buf);
    std::snprintf(buf, sizeof(buf), "  loss          first %s  last %s\n",
                  Scientific(s.first_loss).c_str(),
                  Scientific(s.last_loss).c_str());
    out.append(buf);
    if (s.validations > 0) {
      std::snprintf(
          buf, sizeof(buf),
          "  validation    %" PRIu64
          " evaluations, last loss %s at "
          "iteration %lld\n",
          s.validations, Scientific(s.last_validation_loss).c_str(),
          static_cast<long long>(s.last_validation_iteration.value_or(0)));
      out.append(buf);
    }
    std::snprintf(buf, sizeof(buf),
                  "  nan loss records %" PRIu64 ", nan iterations %" PRIu64
                  ", skipped iterations %" PRIu64 ", checkpoints %" PRIu64 "\n",
                  s.nan_loss_records, s.nan_iterations, s.skipped_iterations,
                  s.checkpoints);
    out.append(buf);
  }
  std::snprintf(buf, sizeof(buf),
                "lines %" PRIu64 ", records %" PRIu64 ", events %" PRIu64
                ", duplicates dropped %" PRIu64
                ", unparsed candidate lines %" PRIu64 "\n",
                stats.lines, stats.records, stats.events,
                stats.duplicate_iterations, stats.unparsed_candidates);
  out.append(buf);
  if (stats.unparsed_candidates > 0) {
    out.append("  example of an unparsed candidate line: ");
    out.append(stats.unparsed_example.substr(0, 200));
    out.push_back('\n');
  }
  if (stats.oversized_lines > 0) {
    std::snprintf(buf, sizeof(buf), "  %" PRIu64 " oversized lines skipped\n",
                  stats.oversized_lines);
    out.append(buf);
  }
  return out;
}

}  // namespace lens
