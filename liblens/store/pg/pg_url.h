// PostgreSQL connection URLs: "postgresql://user:password@host:port/db?k=v".
// Parsed once into a PgUrl; the password travels only into conninfo() (what
// libpq receives) and never into messages.
#ifndef LENS_STORE_PG_PG_URL_H_
#define LENS_STORE_PG_PG_URL_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lens/status.h"

namespace lens::store {

// A parsed PostgreSQL URL. All fields are percent-decoded. A value type;
// safe to copy and to use from any thread.
struct PgUrl {
  std::string host;  // DNS name, IPv4 address or IPv6 address (no brackets)
  int port = 5432;
  std::string database;
  std::string user;      // empty: libpq's default (the OS user)
  std::string password;  // never printed; empty: none
  // Allowed libpq options in URL order (see ParsePgUrl).
  std::vector<std::pair<std::string, std::string>> query;

  // The libpq "keyword='value' ..." string: every value single-quoted with
  // backslash escapes, the password included, connect_timeout='5' unless the
  // URL gives one, and client_encoding='UTF8' (the store reads and writes
  // UTF-8 text). Secret: never log it.
  std::string conninfo() const;
  // "postgresql://user@host:port/db?k=v&..." (percent-encoded where needed),
  // without the password: for logs and status pages.
  std::string Redacted() const;
  // "postgresql host:port/db": the prefix of every store message.
  std::string target() const;
};

// Parses "postgresql://" or "postgres://" [user[:password]@] host [:port]
// "/" database ["?" key=value ("&" key=value)*], percent-decoding every part.
// host is a DNS name, an IPv4 address or a bracketed IPv6 address; port is
// 1..65535 (default 5432); the database is required. Query keys: sslmode
// (disable|allow|prefer|require|verify-ca|verify-full), sslrootcert,
// sslcert, sslkey, connect_timeout (a positive integer, seconds),
// application_name, target_session_attrs; each at most once.
// Errors: kInvalidArgument "postgresql URL <url without password>: <what is
// wrong>"; no error message ever contains the password.
StatusOr<PgUrl> ParsePgUrl(std::string_view url);

}  // namespace lens::store

#endif  // LENS_STORE_PG_PG_URL_H_
