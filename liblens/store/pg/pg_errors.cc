// How PostgreSQL failures are classified and worded (pg_errors.h).
#include "store/pg/pg_errors.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "store/pg/pg_conn.h"

namespace lens::store {
namespace {

// SQLSTATE -> code; the first matching prefix wins (db.h, pg_conn.h).
struct SqlStateRule {
  std::string_view prefix;
  StatusCode code;
};
constexpr std::array<SqlStateRule, 18> kSqlStateRules = {{
    {"23505", StatusCode::kAlreadyExists},
    {"40001", StatusCode::kUnavailable},  // serialization failure: retry
    {"40P01", StatusCode::kUnavailable},  // deadlock: retry
    {"40003", StatusCode::kUnavailable},  // statement completion unknown
    {"55P03", StatusCode::kUnavailable},  // lock not available (lock_timeout)
    {"57P01", StatusCode::kUnavailable},  // admin shutdown
    {"57P02", StatusCode::kUnavailable},  // crash shutdown
    {"57P03", StatusCode::kUnavailable},  // cannot connect now
    {"57014", StatusCode::kDeadlineExceeded},  // statement timeout / cancel
    {"42501", StatusCode::kPermissionDenied},
    {"08", StatusCode::kUnavailable},
    {"53", StatusCode::kUnavailable},
    {"23", StatusCode::kFailedPrecondition},
    {"22", StatusCode::kInvalidArgument},
    {"28", StatusCode::kPermissionDenied},
    {"3D", StatusCode::kNotFound},
    {"25", StatusCode::kFailedPrecondition},
    {"40", StatusCode::kFailedPrecondition},
}};

// libpq's (15) words for a TLS set-up that cannot work, and what to check;
// its own message already names the file or the host where it has one.
struct TlsFailure {
  std::string_view libpq_text;
  std::string_view hint;
};
constexpr std::array<TlsFailure, 7> kTlsFailures = {{
    {"certificate verify failed",
     "the server's certificate is not signed by a CA in sslrootcert, or has "
     "expired"},
    {"does not match host name", ""},
    {"root certificate file", ""},
    {"could not read root certificate", ""},
    {"server does not support SSL", ""},
    {"private key file", ""},
    {"could not load private key", ""},
}};

}  // namespace

StatusCode PgStatusCode(std::string_view sqlstate) {
  for (const SqlStateRule& rule : kSqlStateRules) {
    if (sqlstate.substr(0, rule.prefix.size()) == rule.prefix) return rule.code;
  }
  return StatusCode::kInternal;
}

std::string FirstLine(std::string_view what) {
  while (!what.empty() && std::isspace(static_cast<unsigned char>(what[0]))) {
    what.remove_prefix(1);
  }
  what = what.substr(0, what.find('\n'));
  for (std::string_view severity : {"ERROR:", "FATAL:", "PANIC:"}) {
    if (what.substr(0, severity.size()) == severity) {
      what.remove_prefix(severity.size());
      while (!what.empty() && what[0] == ' ') what.remove_prefix(1);
    }
  }
  while (!what.empty() &&
         std::isspace(static_cast<unsigned char>(what.back()))) {
    what.remove_suffix(1);
  }
  return what.empty() ? "no detail" : std::string(what);
}

std::string Describe(std::string_view sql) {
  auto space = [](char c) {
    return std::isspace(static_cast<unsigned char>(c));
  };
  std::string out;
  size_t i = 0;
  for (int words = 0; words < 3 && out.size() < 60; ++words) {
    while (i < sql.size() && space(sql[i])) ++i;
    const size_t start = i;
    while (i < sql.size() && !space(sql[i])) ++i;
    if (i == start) break;
    if (words > 0) out.push_back(' ');
    out.append(sql.substr(start, std::min<size_t>(i - start, 60)));
  }
  while (i < sql.size() && space(sql[i])) ++i;
  return "statement \"" + out + (i < sql.size() ? " ...\"" : "\"");
}

void Scrub(std::string* msg, const std::string& password) {
  if (password.empty()) return;
  for (size_t pos = msg->find(password); pos != std::string::npos;
       pos = msg->find(password, pos + 4)) {
    msg->replace(pos, password.size(), "****");
  }
}

StatusCode ConnectCode(std::string_view msg) {
  auto has = [&](std::string_view s) {
    return msg.find(s) != std::string_view::npos;
  };
  if (has("authentication failed") || has("no pg_hba.conf entry") ||
      has("pg_hba.conf rejects") || has("no password supplied") ||
      (has("role \"") && has("does not exist"))) {
    return StatusCode::kPermissionDenied;
  }
  if (has("database \"") && has("does not exist")) return StatusCode::kNotFound;
  // The server's certificate or the client's TLS files: a configuration
  // that no retry fixes.
  for (const TlsFailure& f : kTlsFailures) {
    if (has(f.libpq_text)) return StatusCode::kFailedPrecondition;
  }
  return StatusCode::kUnavailable;
}

std::string ConnectHint(std::string_view msg) {
  for (const TlsFailure& f : kTlsFailures) {
    if (msg.find(f.libpq_text) != std::string_view::npos && !f.hint.empty()) {
      return " (" + std::string(f.hint) + ")";
    }
  }
  return {};
}

}  // namespace lens::store
