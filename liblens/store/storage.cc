// The storage table (storage systems the cluster uses).
#include <rapidjson/document.h>

#include <algorithm>
#include <cctype>

#include "lens/store.h"
#include "store/db.h"
#include "store/text.h"

namespace lens {
namespace {

using store::ColumnKind;
using store::Conn;
using store::Param;
using store::Rows;

// Refuses configs that carry secrets (at any depth).
Status CheckNoSecrets(const rapidjson::Value& v, const std::string& path) {
  static constexpr std::string_view kWords[] = {
      "password",   "passwd",      "secret",    "token",
      "credential", "private_key", "privatekey"};
  if (v.IsObject()) {
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
      std::string name(it->name.GetString(), it->name.GetStringLength());
      std::string lower = name;
      std::transform(lower.begin(), lower.end(), lower.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      for (std::string_view w : kWords) {
        if (lower.find(w) != std::string::npos &&
            lower.find("secretref") == std::string::npos &&
            lower.find("secret_ref") == std::string::npos) {
          return InvalidArgumentError(
              "storage.config: key '" + path + name +
              "' looks like a secret; store a reference to a Kubernetes "
              "Secret (e.g. \"secretRef\") instead");
        }
      }
      LENS_RETURN_IF_ERROR(CheckNoSecrets(it->value, path + name + "."));
    }
  } else if (v.IsArray()) {
    for (const auto& e : v.GetArray())
      LENS_RETURN_IF_ERROR(CheckNoSecrets(e, path));
  }
  return OkStatus();
}

}  // namespace

Status StorageRepository::UpsertStorage(const StorageRecord& in) {
  constexpr std::string_view t = "storage";
  StorageRecord s = in;
  LENS_RETURN_IF_ERROR(store::CheckKey(t, "name", &s.name));
  LENS_RETURN_IF_ERROR(
      store::CheckText(t, "kind", &s.kind, store::kMaxKeyBytes));
  LENS_RETURN_IF_ERROR(
      store::CheckText(t, "status", &s.status, store::kMaxKeyBytes));
  LENS_RETURN_IF_ERROR(store::CheckJson(t, "config", &s.config_json));
  LENS_RETURN_IF_ERROR(store::CheckTime(t, "updated_at", s.updated_at));
  rapidjson::Document doc;
  doc.Parse(s.config_json.data(), s.config_json.size());
  LENS_RETURN_IF_ERROR(CheckNoSecrets(doc, ""));
  static constexpr store::Column kColumns[] = {
      {"name"},
      {"kind"},
      {"status"},
      {"config", ColumnKind::kJson},
      {"updated_at", ColumnKind::kTimestamp}};
  const std::vector<Param> row = {s.name, s.kind, s.status, s.config_json,
                                  store::Us(s.updated_at)};
  return store::WriteRows(*db_, {t, kColumns, 1}, std::span(&row, 1));
}

namespace {
constexpr std::string_view kStorageSelect =
    "SELECT name, kind, status, config, lens_us(updated_at) FROM storage";
StorageRecord ReadStorage(const Rows& r, size_t i) {
  return {r.Text(i, 0), r.Text(i, 1), r.Text(i, 2), r.Text(i, 3),
          store::FromUs(r.Int(i, 4))};
}
}  // namespace

StatusOr<StorageRecord> StorageRepository::GetStorage(std::string_view name) {
  Rows rows;
  const Param p[] = {name};
  LENS_RETURN_IF_ERROR(db_->Read([&](Conn& c) {
    return c.Execute(std::string(kStorageSelect) + " WHERE name = $1", p,
                     &rows);
  }));
  if (rows.empty()) {
    return NotFoundError("storage '" + std::string(name) + "' not found");
  }
  return ReadStorage(rows, 0);
}

StatusOr<std::vector<StorageRecord>> StorageRepository::ListStorage() {
  LENS_ASSIGN_OR_RETURN(
      Rows rows,
      store::Query(*db_, std::string(kStorageSelect) + " ORDER BY name", {}));
  std::vector<StorageRecord> out;
  for (size_t i = 0; i < rows.size(); ++i) out.push_back(ReadStorage(rows, i));
  return out;
}

}  // namespace lens
