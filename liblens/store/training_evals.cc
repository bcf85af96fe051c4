// training_validations and training_memory_reports: written inside
// TrainingWriter::Write's transaction, read by TrainingRepository.
#include "lens/store.h"
#include "store/db.h"
#include "store/text.h"
#include "store/training_codec.h"

namespace lens {
namespace store {
namespace {

constexpr Column kValidationColumns[] = {{"workload_uid"},
                                         {"run"},
                                         {"iteration"},
                                         {"split"},
                                         {"end_of_training"},
                                         {"ts", ColumnKind::kTimestamp},
                                         {"format"},
                                         {"line"},
                                         {"loss"},
                                         {"perplexity"},
                                         {"extra", ColumnKind::kJson}};

constexpr Column kMemoryColumns[] = {
    {"workload_uid"},     {"run"},         {"rank"},
    {"context"},          {"iteration"},   {"ts", ColumnKind::kTimestamp},
    {"format"},           {"line"},        {"allocated_mb"},
    {"max_allocated_mb"}, {"reserved_mb"}, {"max_reserved_mb"}};

Param OptInt(std::optional<int64_t> v) { return v ? Param(*v) : Param(); }

std::optional<double> Seconds(const Rows& r, size_t i, size_t col) {
  if (r.IsNull(i, col)) return std::nullopt;
  return static_cast<double>(r.Int(i, col)) / 1e6;
}

std::optional<double> OptDouble(const Rows& r, size_t i, size_t col) {
  if (r.IsNull(i, col)) return std::nullopt;
  return r.Double(i, col);
}

}  // namespace

Status WriteEvaluations(Conn& c, std::string_view workload,
                        const std::unordered_map<int32_t, int32_t>& runs,
                        std::span<const ValidationRecord> validations,
                        std::span<const MemoryReport> memory) {
  std::vector<std::string> extra;
  extra.reserve(validations.size());
  std::vector<std::vector<Param>> rows;
  rows.reserve(validations.size());
  for (const ValidationRecord& v : validations) {
    extra.push_back(ExtraJson(v.extra));
    rows.push_back({workload, int64_t{runs.at(v.run)}, v.iteration,
                    EvaluationSplitName(v.split), v.end_of_training,
                    OptInt(TimeUs(v.timestamp_s)), TrainingFormatName(v.format),
                    static_cast<int64_t>(v.line), Finite(v.loss),
                    Finite(v.perplexity), extra.back()});
  }
  LENS_RETURN_IF_ERROR(
      UpsertRows(c, {"training_validations", kValidationColumns, 5}, rows)
          .status());
  std::vector<std::string> contexts;
  contexts.reserve(memory.size());
  rows.clear();
  for (const MemoryReport& m : memory) {
    contexts.push_back(m.context);
    LENS_RETURN_IF_ERROR(CheckText("training_memory_reports", "context",
                                   &contexts.back(), kMaxTextBytes));
    rows.push_back({workload, int64_t{runs.at(m.run)}, int64_t{m.rank},
                    contexts.back(), OptInt(m.iteration),
                    OptInt(TimeUs(m.timestamp_s)), TrainingFormatName(m.format),
                    static_cast<int64_t>(m.line), Finite(m.allocated_mb),
                    Finite(m.max_allocated_mb), Finite(m.reserved_mb),
                    Finite(m.max_reserved_mb)});
  }
  return UpsertRows(c, {"training_memory_reports", kMemoryColumns, 4}, rows)
      .status();
}

}  // namespace store

StatusOr<std::vector<ValidationRecord>> TrainingRepository::ListValidations(
    std::string_view workload_uid) {
  const store::Param p[] = {workload_uid};
  LENS_ASSIGN_OR_RETURN(
      store::Rows rows,
      store::Query(
          *db_,
          "SELECT run, iteration, split, end_of_training, lens_us(ts), "
          "format, line, loss, perplexity, extra FROM "
          "training_validations WHERE workload_uid = $1 ORDER BY "
          "run, line, split",
          p));
  std::vector<ValidationRecord> out;
  for (size_t i = 0; i < rows.size(); ++i) {
    ValidationRecord v;
    v.run = static_cast<int32_t>(rows.Int(i, 0));
    v.iteration = rows.Int(i, 1);
    v.split = rows.Text(i, 2) == "test" ? EvaluationSplit::kTest
                                        : EvaluationSplit::kValidation;
    v.end_of_training = rows.Bool(i, 3);
    v.timestamp_s = store::Seconds(rows, i, 4);
    v.format = store::FormatFromName(rows.Text(i, 5));
    v.line = static_cast<uint64_t>(rows.Int(i, 6));
    v.loss = store::OptDouble(rows, i, 7);
    v.perplexity = store::OptDouble(rows, i, 8);
    store::ReadExtra(rows.Text(i, 9), &v.extra);
    out.push_back(std::move(v));
  }
  return out;
}

StatusOr<Page<MemoryReport>> TrainingRepository::ListMemoryReports(
    std::string_view workload_uid, PageRequest request) {
  LENS_RETURN_IF_ERROR(store::CheckPage(request));
  store::Filter f;
  f.Add("workload_uid = ?", workload_uid);
  Page<MemoryReport> page{{}, 0, request.page_num, request.page_size};
  LENS_ASSIGN_OR_RETURN(
      store::Rows rows,
      store::ReadPage(*db_, "training_memory_reports" + f.sql(),
                      "run, rank, context, iteration, lens_us(ts), format, "
                      "line, allocated_mb, max_allocated_mb, reserved_mb, "
                      "max_reserved_mb",
                      "run, line, rank", request, f, &page.total));
  for (size_t i = 0; i < rows.size(); ++i) {
    MemoryReport m;
    m.run = static_cast<int32_t>(rows.Int(i, 0));
    m.rank = static_cast<int32_t>(rows.Int(i, 1));
    m.context = rows.Text(i, 2);
    if (!rows.IsNull(i, 3)) m.iteration = rows.Int(i, 3);
    m.timestamp_s = store::Seconds(rows, i, 4);
    m.format = store::FormatFromName(rows.Text(i, 5));
    m.line = static_cast<uint64_t>(rows.Int(i, 6));
    m.allocated_mb = store::OptDouble(rows, i, 7);
    m.max_allocated_mb = store::OptDouble(rows, i, 8);
    m.reserved_mb = store::OptDouble(rows, i, 9);
    m.max_reserved_mb = store::OptDouble(rows, i, 10);
    page.items.push_back(std::move(m));
  }
  return page;
}

}  // namespace lens
