// One SQLite connection with its cached prepared statements (used by one thread at a
// time), a statement in use (Query), and a write transaction (WriteTx).
#pragma once

#include <sqlite3.h>

#include <string>
#include <unordered_map>
#include <variant>

#include "core/status.h"

namespace boxoffice {

// One SQLite connection with its prepared statements, used by one thread at a time.
class SqliteConnection {
 public:
  explicit SqliteConnection(sqlite3* db) : db_(db) {}
  ~SqliteConnection() {
    for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
    sqlite3_close_v2(db_);
  }
  sqlite3* db() { return db_; }

  // A cached prepared statement, reset and unbound, or null with the error in *status.
  sqlite3_stmt* Prepare(const char* sql, Status* status) {
    auto it = cache_.find(sql);
    if (it != cache_.end()) return it->second;
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr) != SQLITE_OK) {
      *status = Status(Code::kInternal, std::string("sqlite prepare: ") + sqlite3_errmsg(db_));
      return nullptr;
    }
    cache_[sql] = stmt;
    return stmt;
  }

  Status ExecScript(const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      Status s = Translate(sqlite3_errcode(db_), err ? err : "exec failed");
      sqlite3_free(err);
      return s;
    }
    return Status::Ok();
  }

  static Status Translate(int rc, const std::string& what) {
    if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) {
      return Status(Code::kUnavailable, "database busy: " + what);
    }
    // A constraint that a concurrent change won (callers validate everything else): the
    // request may be tried again. Never shown to clients (only kInvalid messages are).
    if (rc == SQLITE_CONSTRAINT) return Status(Code::kUnavailable, "concurrent change: " + what);
    return Status(Code::kInternal, "sqlite: " + what);
  }

 private:
  sqlite3* db_;
  std::unordered_map<const char*, sqlite3_stmt*> cache_;
};

namespace sqlite {

using Value = std::variant<std::nullptr_t, int64_t, std::string>;

// A statement in use: binds on construction, resets on destruction.
class Query {
 public:
  Query(SqliteConnection& conn, const char* sql, std::initializer_list<Value> params)
      : conn_(conn) {
    stmt_ = conn.Prepare(sql, &status_);
    if (!stmt_) {
      BOX_ASSERT(!status_.ok());  // Prepare says why: Next never steps a null statement
      return;
    }
    int i = 1;
    for (const Value& v : params) {
      int rc;
      if (std::holds_alternative<std::nullptr_t>(v)) {
        rc = sqlite3_bind_null(stmt_, i);
      } else if (auto* n = std::get_if<int64_t>(&v)) {
        rc = sqlite3_bind_int64(stmt_, i, *n);
      } else {
        const auto& s = std::get<std::string>(v);
        rc = sqlite3_bind_text(stmt_, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
      }
      if (rc != SQLITE_OK) {
        status_ = SqliteConnection::Translate(rc, sqlite3_errmsg(conn.db()));
        return;
      }
      ++i;
    }
  }
  ~Query() {
    if (stmt_) {
      sqlite3_reset(stmt_);
      sqlite3_clear_bindings(stmt_);
    }
  }

  // Steps once: true with a row, false when done or failed (see status()).
  bool Next() {
    if (!status_.ok()) return false;
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) status_ = SqliteConnection::Translate(rc, sqlite3_errmsg(conn_.db()));
    return false;
  }
  // Runs a statement that returns no rows; the number of rows it changed.
  Result<int> Exec() {
    Next();
    if (!status_.ok()) return status_;
    return sqlite3_changes(conn_.db());
  }
  const Status& status() const { return status_; }

  int64_t Int(int col) { return sqlite3_column_int64(stmt_, col); }
  bool IsNull(int col) { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::string Text(int col) {
    const auto* p = sqlite3_column_text(stmt_, col);
    return p ? std::string(reinterpret_cast<const char*>(p),
                           static_cast<size_t>(sqlite3_column_bytes(stmt_, col)))
             : std::string();
  }

 private:
  SqliteConnection& conn_;
  sqlite3_stmt* stmt_ = nullptr;
  Status status_;
};

// BEGIN IMMEDIATE on construction; ROLLBACK on destruction unless committed.
class WriteTx {
 public:
  explicit WriteTx(SqliteConnection& conn) : conn_(conn) {
    status_ = conn_.ExecScript("BEGIN IMMEDIATE");
  }
  ~WriteTx() {
    if (status_.ok() && !done_) conn_.ExecScript("ROLLBACK");
  }
  const Status& status() const { return status_; }
  Status Commit() {
    BOX_ASSERT(status_.ok() && !done_);  // once, after a BEGIN that took (callers check it)
    done_ = true;
    Status s = conn_.ExecScript("COMMIT");
    if (!s.ok()) conn_.ExecScript("ROLLBACK");
    return s;
  }

 private:
  SqliteConnection& conn_;
  Status status_;
  bool done_ = false;
};

}  // namespace sqlite
}  // namespace boxoffice
