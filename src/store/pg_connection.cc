#include "store/pg_connection.h"

#include <algorithm>

#include "core/log.h"
#include "store/pg_connect.h"

namespace boxoffice {

Result<std::unique_ptr<PgConnection>> ConnectPg(const PgOptions& options) {
  // Off the I/O loops (the blocking pool, the jobs): libpq may resolve the host itself.
  const PgConnectParams params(options.url, options.connect_timeout, "boxoffice");
  auto conn = std::make_unique<PgConnection>(PQconnectdbParams(params.keys(), params.values(), 1));
  if (conn->broken()) {
    return Status(Code::kUnavailable, "cannot connect to postgresql");
  }
  // Server notices become JSON log lines like everything else on stderr.
  PQsetNoticeProcessor(
      conn->raw(),
      [](void*, const char* message) {
        std::string text = message;
        while (!text.empty() && text.back() == '\n') text.pop_back();
        LogInfo("postgresql notice", {{"detail", text}});
      },
      nullptr);
  // (No JIT, as on the loops' connections: kSessionLimits in store/pg_pipeline.cc.)
  const std::string setup =
      "SET statement_timeout = " + std::to_string(options.statement_timeout.count()) +
      "; SET lock_timeout = " + std::to_string(options.lock_timeout.count()) +
      "; SET idle_in_transaction_session_timeout = 60000; SET jit = off";
  if (Status s = conn->Simple(setup.c_str()); !s.ok()) return s;
  return conn;
}

}  // namespace boxoffice
