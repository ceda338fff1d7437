// What every PostgreSQL driver of the store shares: named statements, parameters in text
// form, result ownership and reading, array literals, and the one translation of a
// PostgreSQL error into a Status (no database text ever reaches a client).
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace boxoffice {

// A statement with the name it is prepared under on each connection.
struct Sql {
  const char* name;
  const char* text;
};

using Param = std::optional<std::string>;  // nullopt: SQL NULL
using PgResultPtr = std::unique_ptr<PGresult, decltype(&PQclear)>;

inline Param P(int64_t v) { return std::to_string(v); }
inline Param P(const std::string& v) { return v; }

// A PostgreSQL array literal with every element quoted.
std::string ArrayLiteral(const std::vector<std::string>& items);
std::string IntArrayLiteral(const std::vector<int64_t>& items);
// Parses the text form of a text[] whose elements need no quoting (seat codes).
std::vector<std::string> ParseArray(std::string_view text);

inline int64_t Int(const PGresult* r, int row, int col) {
  return std::strtoll(PQgetvalue(r, row, col), nullptr, 10);
}
inline std::string Text(const PGresult* r, int row, int col) {
  return std::string(PQgetvalue(r, row, col), static_cast<size_t>(PQgetlength(r, row, col)));
}
inline bool Bool(const PGresult* r, int row, int col) { return PQgetvalue(r, row, col)[0] == 't'; }

// The Status of a failed result (or of the connection, when res is null): kUnavailable for
// a lost connection, timeouts, exhaustion, deadlocks, serialization failures and lost
// constraint races (the request may simply be tried again), kInvalid for a value the
// database refused, kInternal for the rest.
Status PgError(PGconn* conn, const PGresult* res);

}  // namespace boxoffice
