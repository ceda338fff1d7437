#include "store/pg_connection.h"

#include <algorithm>

#include "core/log.h"

namespace boxoffice {

Result<std::unique_ptr<PgConnection>> ConnectPg(const PgOptions& options) {
  const std::string timeout_s =
      std::to_string(std::max<int64_t>(1, options.connect_timeout.count() / 1000));
  const char* keys[] = {"dbname", "connect_timeout", "application_name", nullptr};
  const char* values[] = {options.url.c_str(), timeout_s.c_str(), "boxoffice", nullptr};
  auto conn = std::make_unique<PgConnection>(PQconnectdbParams(keys, values, 1));
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
  const std::string setup =
      "SET statement_timeout = " + std::to_string(options.statement_timeout.count()) +
      "; SET lock_timeout = " + std::to_string(options.lock_timeout.count()) +
      "; SET idle_in_transaction_session_timeout = 60000";
  if (Status s = conn->Simple(setup.c_str()); !s.ok()) return s;
  return conn;
}

}  // namespace boxoffice
