// `lens parse-log --store URL`: the parser's batches into a Store, one
// TrainingWriter per input (so each file's runs map to the workload's stored
// runs on their own). Only lens-platform links this (and the store).
#include <memory>
#include <optional>
#include <string>

#include "commands.h"
#include "lens/store.h"

namespace lens::cli {
namespace {

class StoreParseLogSink : public ParseLogSink {
 public:
  explicit StoreParseLogSink(std::unique_ptr<Store> store)
      : store_(std::move(store)) {}

  Status Begin(const std::string& workload,
               const std::string& source) override {
    writer_.reset();
    auto w = store_->training().OpenWriter(workload, source);
    if (!w.ok()) return w.status();
    writer_.emplace(std::move(*w));
    return OkStatus();
  }
  Status Write(const TrainingBatch& batch) override {
    if (!writer_) return FailedPreconditionError("no input started");
    return writer_->Write(batch);
  }
  std::string target() const override { return store_->target(); }

 private:
  std::unique_ptr<Store> store_;
  std::optional<TrainingWriter> writer_;
};

}  // namespace

StatusOr<std::unique_ptr<ParseLogSink>> OpenStoreSink(const std::string& url) {
  auto store = Store::Open(url);
  if (!store.ok()) return store.status();
  return std::unique_ptr<ParseLogSink>(
      std::make_unique<StoreParseLogSink>(std::move(*store)));
}

}  // namespace lens::cli
