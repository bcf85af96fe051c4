// The `database:` section of the configuration file: the store of the
// cluster daemons and `lens db`. Owned here; registered in service/config.cc.
#ifndef LENS_STORE_CONFIG_H_
#define LENS_STORE_CONFIG_H_

#include <chrono>
#include <string>

#include "core/config_section.h"
#include "lens/status.h"

namespace lens {

// `database:` section: the store of the cluster daemons and `lens db`.
struct DatabaseOptions {
  // `url`: sqlite:///path.db or postgresql://user@host:5432/db (a password
  // belongs in the environment: LENS_STORE_URL).
  std::string url = "sqlite:///var/lib/lens/lens.db";

  // InvalidArgument naming the key (never a password).
  Status Validate() const;
};

namespace config {
extern const SectionSpec<DatabaseOptions> kDatabaseSection;
}  // namespace config

}  // namespace lens

#endif  // LENS_STORE_CONFIG_H_
