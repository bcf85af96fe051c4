// The PostgreSQL backend of db.h, on libpqxx. No libpqxx type or exception
// leaves this folder: every library error becomes a Status (see
// PgStatusCode for the mapping).
#ifndef LENS_STORE_PG_PG_CONN_H_
#define LENS_STORE_PG_PG_CONN_H_

#include <memory>
#include <string_view>

#include "lens/status.h"
#include "store/db.h"
#include "store/pg/pg_url.h"

namespace lens::store {

// A connector for one PostgreSQL database. Connect() opens a new session
// (blocking up to the URL's connect_timeout, default 5 s) and fails with
//   kPermissionDenied  authentication failed / role not allowed;
//   kNotFound          the database does not exist;
//   kFailedPrecondition  TLS cannot work: the server's certificate does not
//                      verify against sslrootcert or names another host, a
//                      certificate or key file is missing or unusable (not
//                      retried; the message names the cause);
//   kUnavailable       refused, timed out, server starting or shutting down,
//                      too many connections (the runner retries);
// and a message "postgresql host:port/db: connect failed: <libpq reason>"
// that never contains the password.
//
// The connections it returns (see Conn in db.h):
//   - Execute prepares each distinct SQL text once per session (statements
//     "lens_s<N>", the least recently used deallocated past 128) and binds
//     parameters as text: int64 in decimal, double in shortest round-trip
//     form ("NaN", "Infinity", "-Infinity" for the specials), bool as
//     "true"/"false", strings as given (an embedded NUL byte is
//     kInvalidArgument). Every non-NULL result cell is a std::string (the
//     text PostgreSQL sends), NULL is monostate.
//   - UpsertBulk sends each column's values as one array parameter of an
//     "INSERT ... SELECT unnest($1::type[]), ... ON CONFLICT" (pg_bulk.h),
//     one statement per 10,000 rows.
//   - ExecScript runs a multi-statement text; it must not contain
//     transaction control (use Begin/Commit).
//   - Begin(true) is "BEGIN" (READ COMMITTED); Begin(false) is "BEGIN
//     ISOLATION LEVEL REPEATABLE READ READ ONLY" (one snapshot for every
//     read of the transaction). Outside Begin every statement autocommits.
//     Commit() of a transaction in which a statement failed is
//     kFailedPrecondition (PostgreSQL rolled it back).
//   - LockMigrations takes a session advisory lock, waiting while another
//     session holds it (bounded only by the session's lock_timeout); the
//     migrations then run their own Begin/Commit. UnlockMigrations(commit)
//     ends a transaction left open (commit or roll back) and releases the
//     lock; kFailedPrecondition when it was not held.
//   - A lost session (server restart, network) is kUnavailable and broken()
//     stays true from then on; libpqxx's transparent reconnection is
//     disabled so that nothing runs outside the transaction it belonged to.
// Fails only when `url` has no host or database. Thread-safe; each Conn is
// used by one thread at a time.
StatusOr<std::unique_ptr<Connector>> MakePostgresConnector(PgUrl url);

// The code for an SQLSTATE (five characters): 23505 kAlreadyExists, other 23
// kFailedPrecondition, 22 kInvalidArgument, 08/53/57P0x and the retryable
// 40001/40P01/40003/55P03 kUnavailable, 28 and 42501 kPermissionDenied, 3D
// kNotFound, 25 and other 40 kFailedPrecondition, 57014 kDeadlineExceeded,
// anything else (42 syntax/undefined object included) kInternal. Exposed for
// tests.
StatusCode PgStatusCode(std::string_view sqlstate);

}  // namespace lens::store

#endif  // LENS_STORE_PG_PG_CONN_H_
