// The storage table (storage systems the cluster uses).
#include <rapidjson/document.h>

#include <algorithm>
#include <cctype>

#include "lens/store.h"
#include "store/db.h"
#include "store/table.h"
#include "store/text.h"

namespace lens {
namespace {

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

const store::Table<StorageRecord>& StorageTable() {
  using R = StorageRecord;
  namespace f = store::field;
  static const store::Table<R> t(
      "storage", 1,
      {f::Key("name", &R::name), f::Name("kind", &R::kind),
       f::Name("status", &R::status), f::Json("config", &R::config_json),
       f::Time("updated_at", &R::updated_at),
       f::Rule<R>([](std::string_view, R* s) {
         rapidjson::Document doc;
         doc.Parse(s->config_json.data(), s->config_json.size());
         return CheckNoSecrets(doc, "");
       })});
  return t;
}

}  // namespace

Status StorageRepository::UpsertStorage(const StorageRecord& s) {
  return StorageTable().Write(*db_, std::span(&s, 1));
}

StatusOr<StorageRecord> StorageRepository::GetStorage(std::string_view name) {
  Rows rows;
  const Param p[] = {name};
  LENS_RETURN_IF_ERROR(db_->Read([&](Conn& c) {
    return c.Execute(
        "SELECT " + StorageTable().select() + " FROM storage WHERE name = $1",
        p, &rows);
  }));
  if (rows.empty()) {
    return NotFoundError("storage '" + std::string(name) + "' not found");
  }
  return StorageTable().Read(rows, 0);
}

StatusOr<std::vector<StorageRecord>> StorageRepository::ListStorage() {
  LENS_ASSIGN_OR_RETURN(Rows rows,
                        store::Query(*db_,
                                     "SELECT " + StorageTable().select() +
                                         " FROM storage ORDER BY name",
                                     {}));
  return StorageTable().ReadAll(rows);
}

}  // namespace lens
