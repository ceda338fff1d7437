// Rows of PgStore's statements read into the store's types (the column lists are the
// statements' in store/pg_sql.h).
#pragma once

#include <optional>
#include <vector>

#include "store/pg_common.h"
#include "store/pg_connection.h"
#include "store/store.h"

namespace boxoffice {

std::vector<Showtime> ReadShowtimes(const PGresult* r);  // every row, without prices
Hold ReadHold(const PGresult* r, int first = 0);  // BOX_HOLD_COLUMNS from column first, row 0
// BOX_BOOKING_COLUMNS of a row, from column `first` on.
Booking ReadBooking(const PGresult* r, int row = 0, int first = 0);
// Outbox rows (id, event_id, type, key, payload, created_at in ms), every row.
std::vector<OutboxEvent> ReadOutboxEvents(const PGresult* r);
// Fills the prices of the listed showtimes (one statement for all of them).
Status LoadPrices(PgConnection& c, std::vector<Showtime>* list);
// kSelectPrices's parameter for the listed showtimes, and its rows put in their places:
// LoadPrices in two halves, for a statement sent on a loop's pipeline.
Param PriceIds(const std::vector<Showtime>& list);
void ApplyPrices(const PGresult* r, std::vector<Showtime>* list);
// kListShowtimes's parameters; now: the store's clock (NULL: the database's).
std::vector<Param> ListParams(const ShowtimeQuery& q, Param now);
// kListShowtimes's rows: ReadShowtimes's, with seats_left.
std::vector<Showtime> ReadListedShowtimes(const PGresult* r);
inline Status Done(const Result<PgResultPtr>& r) { return r.ok() ? Status::Ok() : r.status(); }
inline Param OptMs(const std::optional<Instant>& t) { return t ? P(ToEpochMs(*t)) : Param(); }

}  // namespace boxoffice
