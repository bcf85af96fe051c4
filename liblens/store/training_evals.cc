// The read side of training_validations and training_memory_reports.
#include "lens/store.h"
#include "store/db.h"
#include "store/text.h"
#include "store/training_tables.h"

namespace lens {

StatusOr<std::vector<ValidationRecord>> TrainingRepository::ListValidations(
    std::string_view workload_uid) {
  const store::Param p[] = {workload_uid};
  LENS_ASSIGN_OR_RETURN(
      store::Rows rows,
      store::Query(*db_,
                   "SELECT " + store::ValidationTable().select() +
                       " FROM training_validations WHERE workload_uid = $1 "
                       "ORDER BY run, line, split",
                   p));
  return store::ValidationTable().ReadAll(rows);
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
                      store::MemoryTable().select(), "run, line, rank", request,
                      f, &page.total));
  page.items = store::MemoryTable().ReadAll(rows);
  return page;
}

}  // namespace lens
