// The `database:` section: its key, decoder and rule.
#include "store/config.h"

#include "core/config_decode.h"
#include "core/redact.h"

namespace lens {
namespace config {
namespace {

constexpr FieldRule<DatabaseOptions> kDatabaseRules[] = {
    {"url",
     [](const Ctx& ctx, const YAML::Node& v, const std::string& path,
        DatabaseOptions* out) {
       LENS_ASSIGN_OR_RETURN(out->url, Scalar(ctx, v, path, "a string"));
       Status s = out->Validate();
       return s.ok() ? s : ctx.Error(v, path, s.message().substr(5));
     }},
};

}  // namespace

constinit const SectionSpec<DatabaseOptions> kDatabaseSection{"database",
                                                              kDatabaseRules};

}  // namespace config

Status DatabaseOptions::Validate() const {
  if (url.empty()) return InvalidArgumentError("url: is empty");
  if (url.rfind("sqlite://", 0) != 0 && url.rfind("postgresql://", 0) != 0 &&
      url.rfind("postgres://", 0) != 0) {
    return InvalidArgumentError(
        "url: " + RedactCredentials(url) +
        " is not sqlite:///path.db or postgresql://user@host:5432/db");
  }
  return OkStatus();
}

}  // namespace lens
