// Rows of SqliteStore's statements read into the store's types, and the encodings of a
// seat list (the column lists are the statements' in store/sqlite_sql.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "store/sqlite_connection.h"
#include "store/store.h"

namespace boxoffice::sqlite {

// A seat list as a JSON array (json_each) and comma-separated (membership by ",A1,").
std::string SeatsJson(const std::vector<std::string>& seats);
std::string JoinComma(const std::vector<std::string>& seats);
std::vector<std::string> SplitComma(const std::string& text);
Showtime ReadShowtime(Query& q);
Hold ReadHold(Query& q, Instant now);
// The hold if it exists and belongs to customer_id; kNotFound otherwise.
Result<Hold> LoadHold(SqliteConnection& conn, const std::string& hold_id, int64_t customer_id,
                      Instant now);
Status LoadPrices(SqliteConnection& conn, Showtime* s);
Booking ReadBooking(Query& q);
Result<std::optional<Booking>> LoadBooking(SqliteConnection& c, int64_t booking_id);
// Every outbox row a statement returns (id, event_id, type, key, payload, created_at).
Result<std::vector<OutboxEvent>> ReadOutboxEvents(Query& q);
Value OptMs(const std::optional<Instant>& t);
std::optional<Instant> ReadOptMs(Query& q, int col);

}  // namespace boxoffice::sqlite
