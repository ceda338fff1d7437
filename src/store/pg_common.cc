#include "store/pg_common.h"

#include "core/log.h"

namespace boxoffice {

std::string ArrayLiteral(const std::vector<std::string>& items) {
  std::string out = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    out += '"';
    for (char c : items[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

std::string IntArrayLiteral(const std::vector<int64_t>& items) {
  std::string out = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(items[i]);
  }
  return out + "}";
}

std::vector<std::string> ParseArray(std::string_view text) {
  std::vector<std::string> out;
  if (text.size() < 2) return out;
  text = text.substr(1, text.size() - 2);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string item(text.substr(pos, end - pos));
    if (item.size() >= 2 && item.front() == '"') item = item.substr(1, item.size() - 2);
    out.push_back(item);
    pos = end + 1;
  }
  return out;
}

Status PgError(PGconn* conn, const PGresult* res) {
  const char* state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
  const std::string sqlstate = state ? state : "";
  std::string message = res ? PQresultErrorMessage(res) : PQerrorMessage(conn);
  if (message.empty()) message = PQerrorMessage(conn);
  while (!message.empty() && message.back() == '\n') message.pop_back();
  if (PQstatus(conn) != CONNECTION_OK) {
    // The statement may have been carried out before the connection went.
    return Status(Code::kUnavailable, "database connection lost: " + message).MaybeApplied();
  }
  // 57014 statement timeout, 55P03 lock timeout, 53xxx out of resources, 08xxx connection.
  if (sqlstate == "57014" || sqlstate == "55P03" || sqlstate.rfind("53", 0) == 0 ||
      sqlstate.rfind("08", 0) == 0 || sqlstate == "40P01" || sqlstate == "40001") {
    return Status(Code::kUnavailable, "database busy: " + message);
  }
  // Neither message reaches a client (API.md: no database's own text in errors). 23xxx is a
  // constraint that a concurrent change won (callers validate everything else): the request
  // may simply be tried again. 22xxx is a value the database refuses (the API validates
  // first, so this is a gap in validation, logged with the database's text).
  if (sqlstate.rfind("23", 0) == 0) {
    return Status(Code::kUnavailable, "concurrent change (" + sqlstate + "): " + message);
  }
  if (sqlstate.rfind("22", 0) == 0) {
    LogWarn("database refused a value", {{"sqlstate", sqlstate}, {"error", message}});
    return Status(Code::kInvalid, "a value was refused by the database");
  }
  return Status(Code::kInternal, "postgresql: " + message);
}

}  // namespace boxoffice
