// The change feed's read (docs/storage.md, "Change feed"): the rows of a
// table written at or after a time, by their written_us column. Internal to
// liblens.
#ifndef LENS_STORE_FEED_H_
#define LENS_STORE_FEED_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "lens/status.h"
#include "store/db.h"

namespace lens::store {

// One page of the feed of `table`, inside the caller's read transaction:
// every row written at `since` or later, up to and including the write time
// of the `limit`-th row written after `since` (so a page never splits the
// rows of one write time: they were one transaction, and the next page,
// read from `*through`, starts with all of them again), in written_us order
// and then `order` (the key). Selects `columns` and written_us as the last
// column. `*through` is the largest written_us read, or `since` when none.
// kInvalidArgument for a limit of 0.
StatusOr<Rows> ReadWrittenSince(Conn& c, std::string_view table,
                                const std::string& columns,
                                std::string_view order, int64_t since,
                                size_t limit, int64_t* through);

}  // namespace lens::store

#endif  // LENS_STORE_FEED_H_
