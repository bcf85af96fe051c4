// How PostgreSQL failures are classified (which ones the runner retries) and
// worded (short, never a password).
#ifndef LENS_STORE_PG_PG_ERRORS_H_
#define LENS_STORE_PG_PG_ERRORS_H_

#include <string>
#include <string_view>

#include "lens/status.h"

namespace lens::store {

// The first line of a libpq or server message, without "ERROR:  ".
std::string FirstLine(std::string_view what);
// A short name for a statement in messages: its first three words, never
// the whole text (a multi-row upsert is kilobytes long).
std::string Describe(std::string_view sql);
// Replaces every occurrence of `password` in `msg` with "****".
void Scrub(std::string* msg, const std::string& password);
// What a failed connect means, from libpq's message (it carries no SQLSTATE
// before the session exists): kPermissionDenied (authentication, pg_hba.conf),
// kNotFound (no such database), kFailedPrecondition (TLS: the server's
// certificate does not verify or names another host, a certificate or key
// file cannot be used, the server has no TLS) or kUnavailable.
StatusCode ConnectCode(std::string_view msg);
// " (what to check)" for a connect failure whose libpq message does not say
// it (PostgreSQL 15's "SSL error: certificate verify failed"); else empty.
std::string ConnectHint(std::string_view msg);

}  // namespace lens::store

#endif  // LENS_STORE_PG_PG_ERRORS_H_
