// Opening a database by URL, below the public Store (tests and tools that
// need raw SQL use this; everything else uses lens::Store).
#ifndef LENS_STORE_OPEN_H_
#define LENS_STORE_OPEN_H_

#include <memory>
#include <string>
#include <string_view>

#include "lens/store.h"
#include "store/db.h"

namespace lens::store {

// Parses the URL (see Store::Open), builds the backend's connector and pool,
// and connects once so that a bad host or password fails here. Does not
// migrate.
StatusOr<std::unique_ptr<Database>> OpenDatabase(std::string_view url,
                                                 const StoreOptions& options);

// `url` with any user:password removed, for messages.
std::string RedactUrl(std::string_view url);

}  // namespace lens::store

#endif  // LENS_STORE_OPEN_H_
