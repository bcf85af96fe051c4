#include "store/pg/pg_conn.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <list>
#include <new>
#include <pqxx/pqxx>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "store/pg/pg_bulk.h"
#include "store/pg/pg_errors.h"
#include "store/pg/pg_values.h"

namespace lens::store {
namespace {

// The session advisory lock that serialises migrations ("lens_mig").
constexpr std::string_view kLockSql =
    "SELECT pg_advisory_lock(7810773213384419687)";
constexpr std::string_view kUnlockSql =
    "SELECT pg_advisory_unlock(7810773213384419687)";
// Prepared statements kept per session; upserts make one per chunk size.
constexpr size_t kMaxPrepared = 128;

class PgConn final : public Conn {
 public:
  PgConn(std::unique_ptr<pqxx::connection> conn, std::string target,
         std::string password)
      : conn_(std::move(conn)),
        quiet_(std::make_unique<pqxx::quiet_errorhandler>(*conn_)),
        target_(std::move(target)),
        password_(std::move(password)),
        bulk_(target_) {}

  Dialect dialect() const override { return Dialect::kPostgres; }
  bool broken() const override { return broken_; }

  Status Execute(std::string_view sql, std::span<const Param> params,
                 Rows* out) override {
    std::vector<std::string> texts(params.size());
    std::vector<const char*> values(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      bool is_null = false;
      if (!ToText(params[i], &texts[i], &is_null)) {
        return InvalidArgumentError(target_ + ": " + Describe(sql) +
                                    ": parameter $" + std::to_string(i + 1) +
                                    " contains a NUL byte");
      }
      values[i] = is_null ? nullptr : texts[i].c_str();
    }
    const std::string text(sql);
    return Guard(Describe(sql), [&] {
      const std::string name = Prepared(text);
      pqxx::nontransaction tx(*conn_);
      const pqxx::result r =
          tx.exec_prepared(name, pqxx::prepare::make_dynamic_params(values));
      if (out) *out = ToRows(r);
    });
  }

  Status UpsertBulk(const UpsertSpec& spec,
                    std::span<const std::vector<Param>* const> rows) override {
    return bulk_.Upsert(*this, spec, rows);
  }

  Status ExecScript(std::string_view sql) override {
    const std::string text(sql);
    return Guard("script", [&] {
      pqxx::nontransaction tx(*conn_);
      tx.exec(text);
    });
  }

  Status Begin(bool write) override {
    if (in_tx_) {
      return FailedPreconditionError(target_ +
                                     ": BEGIN: a transaction is already open");
    }
    LENS_RETURN_IF_ERROR(Simple(
        write ? "BEGIN" : "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
        "BEGIN"));
    in_tx_ = true;
    tx_failed_ = false;
    return OkStatus();
  }

  Status Commit() override {
    if (!in_tx_) {
      return FailedPreconditionError(target_ +
                                     ": COMMIT: no transaction is open");
    }
    if (tx_failed_) {
      // PostgreSQL would answer COMMIT with ROLLBACK, without an error.
      Rollback();
      return FailedPreconditionError(target_ +
                                     ": COMMIT: the transaction was rolled "
                                     "back because a statement in it failed");
    }
    Status st = Simple("COMMIT", "COMMIT");
    in_tx_ = false;
    return st;
  }

  void Rollback() override {
    if (in_tx_ && !broken_) static_cast<void>(Simple("ROLLBACK", "ROLLBACK"));
    in_tx_ = false;
    tx_failed_ = false;
  }

  Status LockMigrations() override {
    if (migrating_) {
      return FailedPreconditionError(target_ +
                                     ": migration lock: already held");
    }
    LENS_RETURN_IF_ERROR(Simple(kLockSql, "migration lock"));
    migrating_ = true;
    return OkStatus();
  }

  Status UnlockMigrations(bool commit) override {
    if (!migrating_) {
      return FailedPreconditionError(target_ +
                                     ": migration unlock: lock not held");
    }
    migrating_ = false;
    // Migrations run their own transactions; one still open is ended here.
    Status st;
    if (in_tx_ && commit) {
      st = Commit();
    } else {
      Rollback();
    }
    // Release the lock even when the commit failed (a lost session has
    // released it already).
    std::string released;
    Status unlock = Simple(kUnlockSql, "migration unlock", &released);
    if (unlock.ok() && released != "t") {
      unlock = FailedPreconditionError(
          target_ + ": migration unlock: the lock was not held");
    }
    return st.ok() ? unlock : st;
  }

 private:
  // Runs `fn`, which talks to libpqxx, turning any exception into a Status.
  template <typename Fn>
  Status Guard(std::string_view what, Fn&& fn) {
    if (broken_) {
      return UnavailableError(target_ + ": " + std::string(what) +
                              ": the connection was lost earlier");
    }
    try {
      fn();
      return OkStatus();
    } catch (...) {
      if (in_tx_) tx_failed_ = true;
      return CurrentError(what);
    }
  }

  // libpq's own texts for a session the server or the network ended.
  static bool LooksLikeLostConnection(std::string_view detail) {
    constexpr std::string_view kLost[] = {
        "server closed the connection unexpectedly",
        "no connection to the server",
        "could not receive data from server",
        "could not send data to server",
        "SSL connection has been closed unexpectedly",
        "terminating connection due to"};
    for (std::string_view text : kLost) {
      if (detail.find(text) != std::string_view::npos) return true;
    }
    return false;
  }

  // Converts the exception being handled (call only inside a catch).
  Status CurrentError(std::string_view what) {
    StatusCode code = StatusCode::kInternal;
    std::string detail;
    bool lost = false;
    try {
      throw;
    } catch (const pqxx::broken_connection& e) {
      // Also SQLSTATE class 08 answered on a live session (08P01: wrong
      // number of parameters): then is_open() below stays true and the
      // error is ours (kInternal), not the network's.
      detail = e.what();
    } catch (const pqxx::in_doubt_error& e) {
      lost = true;
      detail = e.what();
    } catch (const pqxx::transaction_rollback& e) {
      code = StatusCode::kUnavailable;  // 40001, 40P01, 40003: retry
      detail = e.what();
    } catch (const pqxx::insufficient_privilege& e) {
      code = StatusCode::kPermissionDenied;
      detail = e.what();
    } catch (const pqxx::sql_error& e) {
      if (!e.sqlstate().empty()) code = PgStatusCode(e.sqlstate());
      // After these the server has closed the session.
      lost = e.sqlstate().starts_with("08") || e.sqlstate().starts_with("57P0");
      detail = e.what();
    } catch (const std::bad_alloc&) {
      code = StatusCode::kResourceExhausted;
      detail = "out of memory";
    } catch (const std::exception& e) {
      detail = e.what();
    } catch (...) {
      detail = "unknown exception";
    }
    std::string reason = FirstLine(detail);
    // libpq reports a dropped socket in the message before PQstatus says so
    // (seen with -m immediate restarts under ASan's slower timing).
    lost = lost || LooksLikeLostConnection(detail);
    if (lost || !conn_->is_open()) {
      broken_ = true;  // reactivation is inhibited: it stays gone
      code = StatusCode::kUnavailable;
      reason = "connection to the server lost (" + reason + ")";
    }
    std::string msg = target_ + ": " + std::string(what) + ": " + reason;
    Scrub(&msg, password_);
    return Status(code, std::move(msg));
  }

  // Runs one parameterless statement; returns the first cell of its result
  // when asked.
  Status Simple(std::string_view sql, std::string_view what,
                std::string* cell = nullptr) {
    const std::string text(sql);
    return Guard(what, [&] {
      pqxx::nontransaction tx(*conn_);
      const pqxx::result r = tx.exec(text);
      if (cell && !r.empty() && r.columns() > 0 && !r[0][0].is_null()) {
        *cell = r[0][0].c_str();
      }
    });
  }

  // The prepared statement for `sql`, declaring it on first use (libpqxx
  // sends PREPARE lazily, at the first execution).
  std::string Prepared(const std::string& sql) {
    if (auto it = prepared_.find(sql); it != prepared_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.lru);
      return it->second.name;
    }
    if (prepared_.size() >= kMaxPrepared) {
      auto it = prepared_.find(*lru_.back());
      const std::string old = std::move(it->second.name);
      lru_.pop_back();
      prepared_.erase(it);
      conn_->unprepare(old);  // DEALLOCATE
    }
    std::string name = "lens_s" + std::to_string(++next_statement_);
    conn_->prepare(name, sql);
    auto [it, inserted] = prepared_.emplace(sql, Statement{name, {}});
    lru_.push_front(&it->first);
    it->second.lru = lru_.begin();
    return name;
  }

  struct Statement {
    std::string name;
    std::list<const std::string*>::iterator lru;
  };

  std::unique_ptr<pqxx::connection> conn_;
  std::unique_ptr<pqxx::quiet_errorhandler> quiet_;  // drops NOTICEs
  const std::string target_;
  const std::string password_;  // only to scrub it from messages
  PgBulkUpserter bulk_;
  bool broken_ = false;
  bool in_tx_ = false;
  bool tx_failed_ = false;
  bool migrating_ = false;
  uint64_t next_statement_ = 0;
  std::unordered_map<std::string, Statement> prepared_;  // by SQL text
  std::list<const std::string*> lru_;  // keys of prepared_, most recent first
};

class PgConnector final : public Connector {
 public:
  explicit PgConnector(PgUrl url)
      : url_(std::move(url)), target_(url_.target()) {}

  Dialect dialect() const override { return Dialect::kPostgres; }
  std::string target() const override { return target_; }

  StatusOr<std::unique_ptr<Conn>> Connect() override {
    std::string detail;
    StatusCode code = StatusCode::kUnavailable;
    try {
      auto conn = std::make_unique<pqxx::connection>(url_.conninfo());
      // A lost session must fail, not silently reconnect outside the
      // transaction it belonged to (libpqxx 6 reconnects by default).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
      conn->inhibit_reactivation(true);
#pragma GCC diagnostic pop
      return std::unique_ptr<Conn>(
          std::make_unique<PgConn>(std::move(conn), target_, url_.password));
    } catch (const std::bad_alloc&) {
      code = StatusCode::kResourceExhausted;
      detail = "out of memory";
    } catch (const std::exception& e) {
      detail = e.what();
      code = ConnectCode(detail);
    } catch (...) {
      detail = "unknown exception";
    }
    std::string msg = target_ + ": connect failed: " + FirstLine(detail) +
                      ConnectHint(detail);
    Scrub(&msg, url_.password);
    return Status(code, std::move(msg));
  }

 private:
  const PgUrl url_;
  const std::string target_;
};

}  // namespace

StatusOr<std::unique_ptr<Connector>> MakePostgresConnector(PgUrl url) {
  if (url.host.empty() || url.database.empty()) {
    return InvalidArgumentError("postgresql URL " + url.Redacted() +
                                ": host and database are required");
  }
  return std::unique_ptr<Connector>(
      std::make_unique<PgConnector>(std::move(url)));
}

}  // namespace lens::store
