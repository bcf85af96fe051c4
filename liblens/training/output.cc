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
// 1e+15); the rest in the shortest round-trip form, non-finite values as the
// strings "nan", "inf", "-inf" (JSON has no such numbers).
void AppendNumber(double v, bool integer, std::string* out) {
  if (integer && std::isfinite(v) && std::fabs(v) < 9.0e15 &&
      v == std::floor(v)) {
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

void Key(std::string_view k, std::string* out) {
  out->push_back(',');
  out->push_back('"');
  out->append(k);
  out->append("\":");
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

void AppendExtra(const std::vector<std::pair<std::string, double>>& extra,
                 std::string* out) {
  if (extra.empty()) return;
  out->append(",\"extra\":{");
  for (size_t i = 0; i < extra.size(); ++i) {
    if (i > 0) out->push_back(',');
    AppendJsonString(extra[i].first, out);
    out->push_back(':');
    AppendNumber(extra[i].second, false, out);
  }
  out->push_back('}');
}

// The keys every item starts with: type, run, line, format.
void AppendHead(std::string_view type, int32_t run, uint64_t line,
                TrainingFormat format, std::string* out) {
  out->append("{\"type\":");
  AppendJsonString(type, out);
  Key("run", out);
  AppendInt(run, out);
  Key("line", out);
  AppendInt(static_cast<int64_t>(line), out);
  Key("format", out);
  AppendJsonString(TrainingFormatName(format), out);
}

void AppendOptional(std::string_view key, std::optional<double> v,
                    std::string* out) {
  if (!v) return;
  Key(key, out);
  AppendNumber(*v, false, out);
}

}  // namespace

void AppendJson(const ValidationRecord& v, std::string* out) {
  AppendHead("validation", v.run, v.line, v.format, out);
  Key("iteration", out);
  AppendInt(v.iteration, out);
  AppendOptional("timestamp", v.timestamp_s, out);
  Key("split", out);
  AppendJsonString(EvaluationSplitName(v.split), out);
  if (v.end_of_training) out->append(",\"end_of_training\":true");
  AppendOptional("loss", v.loss, out);
  AppendOptional("perplexity", v.perplexity, out);
  AppendExtra(v.extra, out);
  out->push_back('}');
}

void AppendJson(const MemoryReport& m, std::string* out) {
  AppendHead("memory_report", m.run, m.line, m.format, out);
  if (m.iteration) {
    Key("iteration", out);
    AppendInt(*m.iteration, out);
  }
  AppendOptional("timestamp", m.timestamp_s, out);
  Key("rank", out);
  AppendInt(m.rank, out);
  Key("context", out);
  AppendJsonString(m.context, out);
  AppendOptional("allocated_mb", m.allocated_mb, out);
  AppendOptional("max_allocated_mb", m.max_allocated_mb, out);
  AppendOptional("reserved_mb", m.reserved_mb, out);
  AppendOptional("max_reserved_mb", m.max_reserved_mb, out);
  out->push_back('}');
}

void AppendJson(const IterationRecord& r, std::string* out) {
  out->append("{\"type\":\"iteration\",\"run\":");
  AppendInt(r.run, out);
  Key("iteration", out);
  AppendInt(r.iteration, out);
  Key("line", out);
  AppendInt(static_cast<int64_t>(r.line), out);
  Key("format", out);
  AppendJsonString(TrainingFormatName(r.format), out);
  if (r.timestamp_s) {
    Key("timestamp", out);
    AppendNumber(*r.timestamp_s, false, out);
  }
  if (r.rank) {
    Key("rank", out);
    AppendInt(*r.rank, out);
  }
  if (r.world_size) {
    Key("world_size", out);
    AppendInt(*r.world_size, out);
  }
  for (const IterationFieldInfo& f : IterationFields()) {
    if (auto v = r.Get(f.field)) {
      Key(f.name, out);
      AppendNumber(*v, f.integer, out);
    }
  }
  AppendExtra(r.extra, out);

  out->push_back('}');
}

void AppendJson(const TrainingEvent& e, std::string* out) {
  AppendHead(TrainingEventTypeName(e.type), e.run, e.line, e.format, out);
  if (e.iteration) {
    Key("iteration", out);
    AppendInt(*e.iteration, out);
  }
  if (e.timestamp_s) {
    Key("timestamp", out);
    AppendNumber(*e.timestamp_s, false, out);
  }
  if (e.duration_s) {
    Key("duration_s", out);
    AppendNumber(*e.duration_s, false, out);
  }
  if (!e.path.empty()) {
    Key("path", out);
    AppendJsonString(e.path, out);
  }
  out->push_back('}');
}

void AppendJson(const RunSummary& s, std::string* out) {
  out->append("{\"type\":\"run_summary\",\"run\":");
  AppendInt(s.run, out);
  Key("format", out);
  AppendJsonString(TrainingFormatName(s.format), out);
  Key("iterations", out);
  AppendInt(static_cast<int64_t>(s.iterations), out);
  auto opt_int = [&](std::string_view k, std::optional<int64_t> v) {
    if (!v) return;
    Key(k, out);
    AppendInt(*v, out);
  };
  auto opt = [&](std::string_view k, std::optional<double> v) {
    if (!v) return;
    Key(k, out);
    AppendNumber(*v, false, out);
  };
  opt_int("first_iteration", s.first_iteration);
  opt_int("last_iteration", s.last_iteration);
  opt_int("target_iteration", s.target_iteration);
  opt("step_ms_p10", s.step_ms_p10);
  opt("step_ms_p50", s.step_ms_p50);
  opt("step_ms_p90", s.step_ms_p90);
  opt("tflops_per_gpu_p50", s.tflops_per_gpu_p50);
  opt("tokens_per_s_per_gpu_p50", s.tokens_per_s_per_gpu_p50);
  opt("first_loss", s.first_loss);
  opt("last_loss", s.last_loss);
  Key("nan_loss_records", out);
  AppendInt(static_cast<int64_t>(s.nan_loss_records), out);
  Key("nan_iterations", out);
  AppendInt(static_cast<int64_t>(s.nan_iterations), out);
  Key("skipped_iterations", out);
  AppendInt(static_cast<int64_t>(s.skipped_iterations), out);
  Key("checkpoints", out);
  AppendInt(static_cast<int64_t>(s.checkpoints), out);
  Key("validations", out);
  AppendInt(static_cast<int64_t>(s.validations), out);
  opt_int("last_validation_iteration", s.last_validation_iteration);
  opt("last_validation_loss", s.last_validation_loss);
  Key("ended", out);
  out->append(s.ended ? "true" : "false");
  out->push_back('}');
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
