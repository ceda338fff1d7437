// PgConnection: one blocking libpq connection with the statements it has prepared, used by
// one thread at a time (from PgStore's pool: jobs, tools, and the store methods that have no
// asynchronous form yet). The loops' connections are store/pg_pipeline.h.
#pragma once

#include <libpq-fe.h>

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "store/pg_common.h"
#include "store/pg_store.h"

namespace boxoffice {

// One libpq connection with the statements it has prepared; used by one thread at a time.
class PgConnection {
 public:
  explicit PgConnection(PGconn* conn) : conn_(conn) {}
  ~PgConnection() { PQfinish(conn_); }

  bool broken() const { return PQstatus(conn_) != CONNECTION_OK; }
  PGconn* raw() const { return conn_; }
  const std::string& last_sqlstate() const { return last_sqlstate_; }

  Status Simple(const char* command) {
    PgResultPtr res(PQexec(conn_, command), &PQclear);
    const auto st = PQresultStatus(res.get());
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return Status::Ok();
    return Fail(res.get());
  }

  Result<PgResultPtr> Exec(const Sql& sql, const std::vector<Param>& params) {
    if (!prepared_.count(std::string(sql.name))) {
      PgResultPtr prep(
          PQprepare(conn_, sql.name, sql.text, static_cast<int>(params.size()), nullptr), &PQclear);
      if (PQresultStatus(prep.get()) != PGRES_COMMAND_OK) return Fail(prep.get());
      prepared_.insert(sql.name);
    }
    std::vector<const char*> values;
    values.reserve(params.size());
    for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
    PgResultPtr res(PQexecPrepared(conn_, sql.name, static_cast<int>(values.size()), values.data(),
                                   nullptr, nullptr, 0),
                    &PQclear);
    const auto st = PQresultStatus(res.get());
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return res;
    return Fail(res.get());
  }

  // COPY … FROM STDIN with `data` (the text format's lines), sent in pieces.
  Status CopyIn(const char* command, std::string_view data) {
    PgResultPtr start(PQexec(conn_, command), &PQclear);
    if (PQresultStatus(start.get()) != PGRES_COPY_IN) return Fail(start.get());
    constexpr size_t kPiece = 1 << 20;
    bool sent = true;
    for (size_t at = 0; sent && at < data.size(); at += kPiece) {
      const size_t n = std::min(kPiece, data.size() - at);
      sent = PQputCopyData(conn_, data.data() + at, static_cast<int>(n)) == 1;
    }
    if (PQputCopyEnd(conn_, sent ? nullptr : "client could not send the data") != 1)
      return Fail(nullptr);
    Status outcome = Status::Ok();
    while (PGresult* raw = PQgetResult(conn_)) {
      PgResultPtr res(raw, &PQclear);
      if (PQresultStatus(res.get()) != PGRES_COMMAND_OK && outcome.ok()) outcome = Fail(res.get());
    }
    return outcome;
  }

  void ResetError() { last_sqlstate_.clear(); }

 private:
  Status Fail(const PGresult* res) {
    const char* state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
    last_sqlstate_ = state ? state : "";
    return PgError(conn_, res);
  }

  PGconn* conn_;
  // By name, not by pointer: the same statement's name may lie at different addresses in
  // different files (string literals are merged by some builds, not by others).
  std::unordered_set<std::string> prepared_;
  std::string last_sqlstate_;
};

// Opens a connection with the store's limits (statement and lock timeouts); kUnavailable
// when the server cannot be reached.
Result<std::unique_ptr<PgConnection>> ConnectPg(const PgOptions& options);

// Deadlock detected, serialization failure: the transaction may simply run again.
inline bool IsRetryable(const std::string& sqlstate) {
  return sqlstate == "40P01" || sqlstate == "40001";
}

}  // namespace boxoffice
