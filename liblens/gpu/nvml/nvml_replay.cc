#include "gpu/nvml/nvml_replay.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <charconv>
#include <climits>
#include <mutex>
#include <utility>
#include <vector>

#include "core/kernel_file.h"
#include "gpu/nvml/nvml_replay_impl.h"

namespace lens::nvml {
namespace replay {

constexpr size_t kMaxReplayBytes = size_t{16} << 20;

Status NvmlReplayImpl::Load(const std::string& path) {
  LENS_ASSIGN_OR_RETURN(std::string text,
                        ReadKernelFile(path, kMaxReplayBytes));
  auto doc = std::make_unique<rapidjson::Document>();
  doc->Parse(text.data(), text.size());
  if (doc->HasParseError()) {
    return InvalidArgumentError(
        path + ": offset " + std::to_string(doc->GetErrorOffset()) + ": " +
        rapidjson::GetParseError_En(doc->GetParseError()));
  }
  const Value* list = Find(*doc, "devices");
  if (list == nullptr || !list->IsArray()) {
    return InvalidArgumentError(
        path + ": expected an object with a \"devices\" array");
  }
  for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
    if (!(*list)[i].IsObject()) {
      return InvalidArgumentError(path + ": devices[" + std::to_string(i) +
                                  "] is not an object");
    }
  }
  std::unique_lock lock(mu_);
  doc_ = std::move(doc);
  path_ = path;
  return OkStatus();
}

Status NvmlReplayImpl::Failure(const Value& value, const std::string& where,
                               const std::string& call) const {
  const Value* code = Find(value, "nvmlReturn");
  if (code == nullptr) return OkStatus();
  if (!code->IsString()) return Invalid(where, "nvmlReturn must be a string");
  std::optional<int> ret = ParseNvmlReturnName(code->GetString());
  if (!ret) {
    return Invalid(
        where, std::string("unknown nvmlReturn \"") + code->GetString() + "\"");
  }
  return NvmlStatus(*ret, call);
}

NvmlReplayImpl::Located NvmlReplayImpl::Top(const char* key) const {
  Located at{OkStatus(), Find(*doc_, key), key, key};
  if (init_count_ == 0) {
    at.status = Uninitialized(key);
  } else if (at.value == nullptr) {
    at.status = Invalid("top level", std::string("no \"") + key + "\"");
  } else {
    at.status = Failure(*at.value, at.where, at.call);
  }
  return at;
}

NvmlReplayImpl::Located NvmlReplayImpl::Call(NvmlDevice d,
                                             const char* key) const {
  const std::string device = DeviceWhere(d);
  Located at{OkStatus(), nullptr, device + "." + key, key};
  const Value* object = init_count_ == 0 ? nullptr : DeviceObject(d);
  if (init_count_ == 0) {
    at.status = Uninitialized(key);
  } else if (object == nullptr) {
    // A handle from before Load replaced the machine.
    at.status = NvmlStatus(kNvmlErrorInvalidArgument, key);
  } else if ((at.value = Find(*object, key)) == nullptr) {
    at.status = Invalid(device, std::string("no \"") + key + "\"");
  } else {
    at.status = Failure(*at.value, at.where, at.call);
  }
  return at;
}

NvmlReplayImpl::Located NvmlReplayImpl::Field(const Located& parent,
                                              const char* key,
                                              bool argument) const {
  Located at{parent.status, nullptr, parent.where + "." + key,
             argument ? parent.call + "(" + key + ")" : parent.call};
  if (!at.status.ok()) return at;
  if ((at.value = Find(*parent.value, key)) == nullptr) {
    at.status = Invalid(parent.where, std::string("no \"") + key + "\"");
  } else if (argument) {
    at.status = Failure(*at.value, at.where, at.call);
  }
  return at;
}

StatusOr<uint64_t> NvmlReplayImpl::Uint64(const Located& at) const {
  LENS_RETURN_IF_ERROR(at.status);
  if (at.value->IsUint64()) return at.value->GetUint64();
  if (at.value->IsString()) {
    std::string_view text(at.value->GetString(), at.value->GetStringLength());
    uint64_t v = 0;
    if (text.size() > 2 &&
        (text.substr(0, 2) == "0x" || text.substr(0, 2) == "0X")) {
      auto [ptr, ec] =
          std::from_chars(text.data() + 2, text.data() + text.size(), v, 16);
      if (ec == std::errc() && ptr == text.data() + text.size()) return v;
    }
  }
  return Invalid(at.where, "expected an unsigned integer or \"0x...\"");
}

StatusOr<unsigned> NvmlReplayImpl::Uint32(const Located& at) const {
  LENS_ASSIGN_OR_RETURN(uint64_t v, Uint64(at));
  if (v > UINT_MAX) return Invalid(at.where, "does not fit an unsigned int");
  return static_cast<unsigned>(v);
}

StatusOr<std::string> NvmlReplayImpl::String(const Located& at) const {
  LENS_RETURN_IF_ERROR(at.status);
  if (!at.value->IsString()) return Invalid(at.where, "expected a string");
  return std::string(at.value->GetString(), at.value->GetStringLength());
}

}  // namespace replay

StatusOr<std::shared_ptr<NvmlReplay>> NvmlReplay::Open(
    const std::string& path) {
  auto replay = std::make_shared<replay::NvmlReplayImpl>();
  LENS_RETURN_IF_ERROR(replay->Load(path));
  return std::shared_ptr<NvmlReplay>(std::move(replay));
}

}  // namespace lens::nvml
