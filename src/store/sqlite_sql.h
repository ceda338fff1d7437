// SQLite's statements (store/sqlite_store.cc and its parts): named constants, prepared
// once per connection. `now` is always a parameter: the store's clock, not SQLite's.
#pragma once

namespace boxoffice::sqlite {

constexpr const char* kPragmaSetup =
    "PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON; PRAGMA temp_store=MEMORY;";
constexpr const char* kCreateMigrationTable =
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT "
    "NULL, applied_at INTEGER NOT NULL)";
constexpr const char* kAppliedVersions = "SELECT version FROM schema_migrations";
constexpr const char* kRecordMigration =
    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)";

constexpr const char* kInsertShowtime =
    "INSERT INTO showtime (title, cinema, hall, starts_at, seat_count, single_seat_gaps,"
    "                      time_zone, sales_close_minutes, refund_until_minutes)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";
constexpr const char* kInsertPrice =
    "INSERT INTO price (showtime_id, category, amount, currency) VALUES (?, ?, ?, ?)";
constexpr const char* kInsertSeat =
    "INSERT INTO show_seat (showtime_id, seat_code, row_label, seat_number, seat_order, "
    "category, accessible, aisle_after) VALUES (?, ?, ?, ?, ?, ?, ?, ?)";
constexpr const char* kSelectShowtime =
    "SELECT showtime_id, title, cinema, hall, starts_at, seat_count, single_seat_gaps,"
    "       time_zone, sales_close_minutes, status, refund_until_minutes, cancel_reason"
    "  FROM showtime WHERE showtime_id = ?";
constexpr const char* kSelectPrices =
    "SELECT category, amount, currency FROM price WHERE showtime_id = ?";
// When asked for (?8), with the seats AVAILABLE at ?7 (now), as kSelectSeatMap counts them;
// else NULL.
constexpr const char* kListShowtimes =
    "SELECT showtime_id, title, cinema, hall, starts_at, seat_count, single_seat_gaps,"
    "       time_zone, sales_close_minutes, status, refund_until_minutes, cancel_reason,"
    "       CASE WHEN ?8 THEN"
    "       (SELECT count(*) FROM show_seat ss WHERE ss.showtime_id = showtime.showtime_id"
    "           AND (ss.status = 'AVAILABLE' OR (ss.status = 'HELD' AND ss.hold_expires_at < ?7)))"
    "       END"
    "  FROM showtime"
    " WHERE (?1 IS NULL OR starts_at >= ?1) AND (?2 IS NULL OR starts_at < ?2)"
    "   AND (?3 IS NULL OR cinema = ?3)"
    "   AND (?4 IS NULL OR starts_at > ?4 OR (starts_at = ?4 AND showtime_id > ?5))"
    " ORDER BY starts_at, showtime_id LIMIT ?6";
constexpr const char* kCountShowtimes = "SELECT count(*) FROM showtime";
// A showtime's terms (MoneyTx::ReadShowtime): start, sales close (epoch ms), cancelled,
// refund terms; no row for an unknown showtime.
constexpr const char* kShowtimeTerms =
    "SELECT starts_at, starts_at - sales_close_minutes * 60000, status = 'CANCELLED',"
    "       refund_until_minutes FROM showtime WHERE showtime_id = ?";
constexpr const char* kBookingShowtime = "SELECT showtime_id FROM booking WHERE booking_id = ?";
constexpr const char* kMarkShowtimeCancelled =
    "UPDATE showtime SET status = 'CANCELLED', cancel_reason = ?2, cancelled_at = ?3"
    " WHERE showtime_id = ?1 AND status = 'SCHEDULED'";
constexpr const char* kEndShowtimeHolds =
    "UPDATE seat_hold SET status = 'RELEASED' WHERE status = 'HELD' AND hold_id IN"
    " (SELECT hold_id FROM show_seat WHERE showtime_id = ? AND status = 'HELD')";
constexpr const char* kFreeShowtimeSeats =
    "UPDATE show_seat SET status = 'AVAILABLE', hold_id = NULL, customer_id = NULL,"
    "       hold_expires_at = NULL, booking_id = NULL"
    " WHERE showtime_id = ? AND status <> 'AVAILABLE' RETURNING seat_code";
constexpr const char* kCountBookingCheckIns = "SELECT count(*) FROM checkin WHERE booking_id = ?";
constexpr const char* kFreeBookedSeats =
    "UPDATE show_seat SET status = 'AVAILABLE', hold_id = NULL, customer_id = NULL,"
    "       hold_expires_at = NULL, booking_id = NULL"
    " WHERE showtime_id = ? AND booking_id = ? AND status = 'BOOKED'";
// A showtime's sales (?1 the showtime, ?2 now); a NULL last column: no such showtime.
constexpr const char* kShowtimeSales =
    "SELECT count(*) FILTER (WHERE s.status = 'AVAILABLE'"
    "                         OR (s.status = 'HELD' AND s.hold_expires_at < ?2)),"
    "       count(*) FILTER (WHERE s.status = 'HELD' AND s.hold_expires_at >= ?2),"
    "       count(*) FILTER (WHERE s.status = 'BOOKED'),"
    "       (SELECT count(*) FROM booking b WHERE b.showtime_id = ?1 AND b.status = 'PENDING'),"
    "       (SELECT count(*) FROM booking b WHERE b.showtime_id = ?1 AND b.status = 'CONFIRMED'),"
    "       (SELECT count(*) FROM booking b WHERE b.showtime_id = ?1 AND b.status = 'FAILED'),"
    "       (SELECT count(*) FROM booking b WHERE b.showtime_id = ?1 AND b.status = 'REFUNDED'),"
    "       (SELECT COALESCE(sum(b.amount), 0) FROM booking b"
    "         WHERE b.showtime_id = ?1 AND b.status = 'CONFIRMED'),"
    "       (SELECT min(p.currency) FROM price p WHERE p.showtime_id = ?1),"
    "       (SELECT count(*) FROM checkin c WHERE c.showtime_id = ?1),"
    "       (SELECT st.status = 'CANCELLED' FROM showtime st WHERE st.showtime_id = ?1),"
    "       r.issued, r.pending, r.refused"
    "  FROM show_seat s,"
    "       (SELECT count(*) FILTER (WHERE r.status = 'ISSUED') AS issued,"
    "               count(*) FILTER (WHERE r.status = 'PENDING' AND NOT r.refused) AS pending,"
    "               count(*) FILTER (WHERE r.status = 'PENDING' AND r.refused) AS refused"
    "          FROM booking b JOIN refund r ON r.booking_id = b.booking_id"
    "         WHERE b.showtime_id = ?1) r"
    " WHERE s.showtime_id = ?1";
constexpr const char* kShowtimeBookings =
    "SELECT booking_id, hold_id, showtime_id, customer_id, seats, status, amount, currency,"
    "       session_id, payment_url, payment_expires_at, payment_id, created_at"
    "  FROM booking WHERE showtime_id = ?1 AND (?2 IS NULL OR status = ?2) AND booking_id > ?3"
    " ORDER BY booking_id LIMIT ?4";
// Whether a showtime's sales have started (?1 the showtime, ?2 now).
constexpr const char* kSalesStarted =
    "SELECT EXISTS (SELECT 1 FROM booking WHERE showtime_id = ?1"
    "                AND status IN ('PENDING', 'CONFIRMED'))"
    "    OR EXISTS (SELECT 1 FROM show_seat WHERE showtime_id = ?1"
    "                AND (status = 'BOOKED' OR (status = 'HELD' AND hold_expires_at >= ?2)))";
constexpr const char* kUpdateShowtime =
    "UPDATE showtime SET title = ?2, starts_at = ?3, refund_until_minutes = ?4"
    " WHERE showtime_id = ?1";
constexpr const char* kUpdatePrice =
    "UPDATE price SET amount = ?3, currency = ?4 WHERE showtime_id = ?1 AND category = ?2";
constexpr const char* kInsertAdminChange =
    "INSERT INTO admin_audit (showtime_id, actor, action, before, after, at)"
    " VALUES (?, ?, ?, ?, ?, ?)";
constexpr const char* kListAdminChanges =
    "SELECT audit_id, showtime_id, actor, action, before, after, at FROM admin_audit"
    " WHERE showtime_id = ? ORDER BY audit_id DESC LIMIT ?";
// Seats are comma-separated: membership is a search of ",A1," in ",A1,A2,".
constexpr const char* kAudit =
    "SELECT"
    " (SELECT count(*) FROM show_seat s LEFT JOIN booking b ON b.booking_id = s.booking_id"
    "   WHERE s.status = 'BOOKED' AND (b.booking_id IS NULL OR b.status <> 'CONFIRMED'"
    "         OR b.showtime_id <> s.showtime_id"
    "         OR instr(',' || b.seats || ',', ',' || s.seat_code || ',') = 0)),"
    " (SELECT count(*) FROM booking b WHERE b.status = 'CONFIRMED'"
    "   AND length(b.seats) - length(replace(b.seats, ',', '')) + 1 <>"
    "   (SELECT count(*) FROM show_seat s WHERE s.showtime_id = b.showtime_id"
    "     AND s.booking_id = b.booking_id AND s.status = 'BOOKED'"
    "     AND instr(',' || b.seats || ',', ',' || s.seat_code || ',') > 0)),"
    " (SELECT count(*) FROM payment p WHERE p.status = 'SUCCEEDED' AND"
    "   EXISTS (SELECT 1 FROM booking b WHERE b.payment_id = p.payment_id"
    "           AND b.status = 'CONFIRMED')"
    "   + EXISTS (SELECT 1 FROM refund r WHERE r.payment_id = p.payment_id) <> 1),"
    " (SELECT count(*) FROM refund WHERE status = 'PENDING'),"
    " (SELECT count(*) FROM show_seat WHERE status = 'BOOKED'),"
    " (SELECT count(*) FROM booking WHERE status = 'CONFIRMED'),"
    " (SELECT count(*) FROM payment WHERE status = 'SUCCEEDED'),"
    " (SELECT count(*) FROM booking b JOIN showtime st ON st.showtime_id = b.showtime_id"
    "   WHERE b.status = 'CONFIRMED' AND st.status = 'CANCELLED')";
constexpr const char* kSetWaitingRoom =
    "INSERT INTO waiting_room (showtime_id, enabled, active_limit, admission_ttl_ms, updated_at)"
    " SELECT showtime_id, ?2, ?3, ?4, ?5 FROM showtime WHERE showtime_id = ?1"
    " ON CONFLICT (showtime_id) DO UPDATE SET enabled = excluded.enabled,"
    "   active_limit = excluded.active_limit, admission_ttl_ms = excluded.admission_ttl_ms,"
    "   updated_at = excluded.updated_at";
constexpr const char* kEnabledWaitingRooms =
    "SELECT showtime_id, active_limit, admission_ttl_ms FROM waiting_room WHERE enabled"
    " ORDER BY showtime_id";

constexpr const char* kSelectSeatMap =
    "SELECT seat_code, row_label, seat_number, category,"
    "       CASE WHEN status = 'HELD' AND hold_expires_at < ?2 THEN 'AVAILABLE' ELSE status END,"
    "       accessible, aisle_after,"
    "       (SELECT st.status = 'CANCELLED' FROM showtime st WHERE st.showtime_id = ?1)"
    "  FROM show_seat WHERE showtime_id = ?1 ORDER BY seat_order";
constexpr const char* kSelectSeatOwners =
    "SELECT seat_code,"
    "       CASE WHEN status = 'HELD' AND hold_expires_at < ?2 THEN 'AVAILABLE' ELSE status END,"
    "       CASE WHEN status = 'HELD' AND hold_expires_at < ?2 THEN NULL ELSE hold_id END,"
    "       CASE WHEN status = 'HELD' AND hold_expires_at < ?2 THEN NULL ELSE customer_id END"
    "  FROM show_seat WHERE showtime_id = ?1 ORDER BY seat_order";

// The seeds' conditional UPDATE: the availability check is in the WHERE clause and an
// expired hold counts as free. The caller compares the changed-row count to the seats.
constexpr const char* kHoldSeats =
    "UPDATE show_seat SET status = 'HELD', hold_id = ?1, customer_id = ?2,"
    "       hold_expires_at = ?3, booking_id = NULL"
    " WHERE showtime_id = ?4 AND seat_code IN (SELECT value FROM json_each(?5))"
    "   AND (status = 'AVAILABLE' OR (status = 'HELD' AND hold_expires_at < ?6))";
// Seats of the showtime the customer holds now (API.md's HOLD_LIMIT), read in the hold's
// write transaction: with one writer at a time, the count and the hold are atomic.
constexpr const char* kCustomerHeld =
    "SELECT COALESCE(sum(length(seats) - length(replace(seats, ',', '')) + 1), 0)"
    "  FROM seat_hold WHERE customer_id = ?1 AND showtime_id = ?2 AND status = 'HELD'"
    "   AND expires_at >= ?3";
// Which requested seats exist and which are free (or already ours), to explain a refusal.
constexpr const char* kExplainHold =
    "SELECT seat_code, status = 'AVAILABLE' OR (status = 'HELD' AND hold_expires_at < ?3)"
    "       OR hold_id = ?4"
    "  FROM show_seat WHERE showtime_id = ?1 AND seat_code IN (SELECT value FROM json_each(?2))";
constexpr const char* kShowtimeExists = "SELECT 1 FROM showtime WHERE showtime_id = ?";
// The seats the seat rules look at, and whether each is free now (expired holds are).
constexpr const char* kSeatsFree =
    "SELECT seat_code, status = 'AVAILABLE' OR (status = 'HELD' AND hold_expires_at < ?3)"
    "  FROM show_seat WHERE showtime_id = ?1 AND seat_code IN (SELECT value FROM json_each(?2))";
constexpr const char* kInsertHold =
    "INSERT INTO seat_hold (hold_id, showtime_id, customer_id, seats, status, created_at,"
    " expires_at) VALUES (?, ?, ?, ?, 'HELD', ?, ?)";
constexpr const char* kSelectHold =
    "SELECT hold_id, showtime_id, customer_id, seats, status, created_at, expires_at"
    "  FROM seat_hold WHERE hold_id = ? AND customer_id = ?";
constexpr const char* kReleaseSeats =
    "UPDATE show_seat SET status = 'AVAILABLE', hold_id = NULL, customer_id = NULL,"
    "       hold_expires_at = NULL"
    " WHERE showtime_id = ? AND hold_id = ? AND status = 'HELD'";
constexpr const char* kMarkHoldReleased =
    "UPDATE seat_hold SET status = 'RELEASED' WHERE hold_id = ? AND status = 'HELD'";
constexpr const char* kSetHoldExpiry = "UPDATE seat_hold SET expires_at = ? WHERE hold_id = ?";
// The seeds' sweeper, batched: only rows whose hold has expired, at most ?2 of them.
constexpr const char* kSweepExpired =
    "UPDATE show_seat SET status = 'AVAILABLE', hold_id = NULL, customer_id = NULL,"
    "       hold_expires_at = NULL"
    " WHERE (showtime_id, seat_code) IN (SELECT showtime_id, seat_code FROM show_seat"
    "                                     WHERE status = 'HELD' AND hold_expires_at < ?1"
    "                                     LIMIT ?2)"
    "   AND status = 'HELD' AND hold_expires_at < ?1"
    " RETURNING showtime_id, seat_code";

constexpr const char* kPendingBookingOfHold =
    "SELECT booking_id FROM booking WHERE hold_id = ? AND status = 'PENDING'";
constexpr const char* kRearmSeats =
    "UPDATE show_seat SET hold_expires_at = ?1"
    " WHERE showtime_id = ?2 AND hold_id = ?3 AND status = 'HELD' AND hold_expires_at >= ?4";
constexpr const char* kSeatPrices =
    "SELECT p.amount, p.currency"
    "  FROM show_seat s JOIN price p ON p.showtime_id = s.showtime_id AND p.category = s.category"
    " WHERE s.showtime_id = ?1 AND s.seat_code IN (SELECT value FROM json_each(?2))";
constexpr const char* kInsertBooking =
    "INSERT INTO booking (hold_id, showtime_id, customer_id, seats, status, amount, currency,"
    " created_at, updated_at) VALUES (?1, ?2, ?3, ?4, 'PENDING', ?5, ?6, ?7, ?7)";
constexpr const char* kAttachSession =
    "UPDATE booking SET session_id = ?1, payment_url = ?2, payment_expires_at = ?3, updated_at = "
    "?4,"
    " email = COALESCE(?6, email)"
    " WHERE booking_id = ?5 AND status = 'PENDING' AND (session_id IS NULL OR session_id = ?1)";
constexpr const char* kSelectBooking =
    "SELECT booking_id, hold_id, showtime_id, customer_id, seats, status, amount, currency,"
    "       session_id, payment_url, payment_expires_at, payment_id, created_at"
    "  FROM booking WHERE booking_id = ?";
constexpr const char* kLiveBookings =
    "SELECT booking_id, hold_id, showtime_id, customer_id, seats, status, amount, currency,"
    "       session_id, payment_url, payment_expires_at, payment_id, created_at"
    "  FROM booking WHERE showtime_id = ? AND status IN ('PENDING', 'CONFIRMED')"
    " ORDER BY booking_id";
constexpr const char* kInsertPayment =
    "INSERT INTO payment (payment_id, session_id, booking_id, status, amount, currency, "
    "received_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (payment_id) DO NOTHING";
// The seeds' confirm statement: only this hold's seats, only while it has not expired.
constexpr const char* kConfirmSeats =
    "UPDATE show_seat SET status = 'BOOKED', booking_id = ?1, hold_expires_at = NULL"
    " WHERE showtime_id = ?2 AND hold_id = ?3 AND status = 'HELD' AND hold_expires_at >= ?4";
constexpr const char* kMarkHoldBooked = "UPDATE seat_hold SET status = 'BOOKED' WHERE hold_id = ?";
constexpr const char* kUpdateBooking =
    "UPDATE booking SET status = ?1, payment_id = COALESCE(?2, payment_id), updated_at = ?3"
    " WHERE booking_id = ?4";
constexpr const char* kInsertRefund =
    "INSERT INTO refund (refund_id, payment_id, booking_id, amount, currency, status, created_at,"
    " next_attempt_at, reason) VALUES (?1, ?2, ?3, ?4, ?5, 'PENDING', ?6, ?6, ?7)";
constexpr const char* kInsertEvent =
    "INSERT INTO outbox (event_id, type, key, payload, created_at) VALUES (?, ?, ?, ?, ?)";
constexpr const char* kPendingEvents =
    "SELECT id, event_id, type, key, payload, created_at FROM outbox"
    " WHERE published_at IS NULL AND id > ? ORDER BY id LIMIT ?";
// Fenced: one statement, so the lease is checked atomically with the mark.
constexpr const char* kMarkPublished =
    "UPDATE outbox SET published_at = ?1 WHERE published_at IS NULL"
    "   AND id IN (SELECT value FROM json_each(?2))"
    "   AND EXISTS (SELECT 1 FROM relay_lease WHERE name = ?3 AND owner = ?4 AND until >= ?1)";
constexpr const char* kLeaseHeld =
    "SELECT 1 FROM relay_lease WHERE name = ?1 AND owner = ?2 AND until >= ?3";
constexpr const char* kPendingMail =
    "SELECT id, event_id, type, key, payload, created_at FROM outbox WHERE mail_pending = 1"
    " ORDER BY id LIMIT ?";
constexpr const char* kCountPendingMail = "SELECT count(*) FROM outbox WHERE mail_pending = 1";
// Fenced: one statement, so the lease is checked atomically with the mark.
constexpr const char* kMarkMailDone =
    "UPDATE outbox SET mail_pending = 0 WHERE id = ?4 AND mail_pending = 1"
    "   AND EXISTS (SELECT 1 FROM relay_lease WHERE name = ?1 AND owner = ?2 AND until >= ?3)";
constexpr const char* kExpirePendingMail =
    "UPDATE outbox SET mail_pending = 0"
    " WHERE id IN (SELECT id FROM outbox WHERE mail_pending = 1 AND created_at < ?4"
    "              ORDER BY id LIMIT ?5)"
    "   AND EXISTS (SELECT 1 FROM relay_lease WHERE name = ?1 AND owner = ?2 AND until >= ?3)";
constexpr const char* kRefundBooking = "SELECT booking_id, reason FROM refund WHERE refund_id = ?";
constexpr const char* kMarkRefundIssued =
    "UPDATE refund SET status = 'ISSUED', gateway_refund_id = ?1, issued_at = ?2"
    " WHERE refund_id = ?3 AND status = 'PENDING'";
// One writer: claiming is a plain conditional UPDATE; RETURNING gives the claimed rows.
constexpr const char* kClaimStale =
    "UPDATE booking SET claimed_until = ?1"
    " WHERE booking_id IN (SELECT booking_id FROM booking"
    "                       WHERE status = 'PENDING'"
    "                         AND (payment_expires_at <= ?3 OR created_at < ?2)"
    "                         AND (claimed_until IS NULL OR claimed_until < ?3)"
    "                       ORDER BY claimed_until NULLS FIRST, created_at LIMIT ?4)"
    " RETURNING booking_id";
constexpr const char* kReleaseClaims =
    "UPDATE booking SET claimed_until = NULL WHERE status = 'PENDING'"
    "   AND booking_id IN (SELECT value FROM json_each(?1))";
constexpr const char* kSelectKey =
    "SELECT fingerprint, state, lock_token, locked_until, booking_id, hold_expiry_before,"
    "       hold_expiry_after, response_status, response_body"
    "  FROM idempotency_key WHERE customer_id = ? AND key = ?";
constexpr const char* kInsertKey =
    "INSERT INTO idempotency_key (customer_id, key, fingerprint, state, lock_token, locked_until,"
    " created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)"
    " ON CONFLICT (customer_id, key) DO NOTHING";
constexpr const char* kUpdateKey =
    "UPDATE idempotency_key SET state = ?3, lock_token = ?4, locked_until = ?5, booking_id = ?6,"
    "       hold_expiry_before = ?7, hold_expiry_after = ?8, response_status = ?9,"
    "       response_body = ?10, updated_at = ?11"
    " WHERE customer_id = ?1 AND key = ?2";
constexpr const char* kDeleteKey = "DELETE FROM idempotency_key WHERE customer_id = ? AND key = ?";
constexpr const char* kPurgeKeys =
    "DELETE FROM idempotency_key WHERE (customer_id, key) IN"
    " (SELECT customer_id, key FROM idempotency_key WHERE created_at < ?1 LIMIT ?2)";
constexpr const char* kResetSeatsExpiry =
    "UPDATE show_seat SET hold_expires_at = ?4"
    " WHERE showtime_id = ?1 AND hold_id = ?2 AND status = 'HELD' AND hold_expires_at = ?3";
constexpr const char* kCountRecentBookings =
    "SELECT status, count(*) FROM booking WHERE created_at >= ? GROUP BY status";
constexpr const char* kAcquireLease =
    "INSERT INTO relay_lease (name, owner, until) VALUES (?1, ?2, ?3)"
    " ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, until = excluded.until"
    " WHERE relay_lease.owner = excluded.owner OR relay_lease.until < ?4"
    " RETURNING owner";
constexpr const char* kPendingRefunds =
    "SELECT refund_id, payment_id, booking_id, amount, currency, attempts FROM refund"
    " WHERE status = 'PENDING' AND next_attempt_at <= ?1 ORDER BY next_attempt_at LIMIT ?2";
constexpr const char* kRefundAttemptFailed =
    "UPDATE refund SET attempts = attempts + 1, refused = ?1, last_error = ?2,"
    "       next_attempt_at = ?3 WHERE refund_id = ?4 AND status = 'PENDING'";
// The showtimes cancelled since ?1 (ms), the latest ?2, with their refunds by state.
constexpr const char* kCancelledRefunds =
    "SELECT st.showtime_id,"
    "       count(r.refund_id) FILTER (WHERE r.status = 'ISSUED'),"
    "       count(r.refund_id) FILTER (WHERE r.status = 'PENDING' AND NOT r.refused),"
    "       count(r.refund_id) FILTER (WHERE r.status = 'PENDING' AND r.refused)"
    "  FROM (SELECT showtime_id FROM showtime"
    "         WHERE status = 'CANCELLED' AND cancelled_at >= ?1"
    "         ORDER BY cancelled_at DESC LIMIT ?2) st"
    "  LEFT JOIN booking b ON b.showtime_id = st.showtime_id"
    "  LEFT JOIN refund r ON r.booking_id = b.booking_id"
    " GROUP BY st.showtime_id ORDER BY st.showtime_id";
constexpr const char* kRefundBacklog =
    "SELECT count(*) FILTER (WHERE NOT refused), count(*) FILTER (WHERE refused)"
    "  FROM refund WHERE status = 'PENDING'";

// Tickets and the door (migration 0029, store/ticket_store.h).
constexpr const char* kCustomerBookings =
    "SELECT b.booking_id, b.hold_id, b.showtime_id, b.customer_id, b.seats, b.status, b.amount,"
    "       b.currency, b.session_id, b.payment_url, b.payment_expires_at, b.payment_id,"
    "       b.created_at, s.title, s.starts_at"
    "  FROM booking b JOIN showtime s ON s.showtime_id = b.showtime_id"
    " WHERE b.customer_id = ?1 AND (?2 IS NULL OR (b.created_at, b.booking_id) < (?2, ?3))"
    " ORDER BY b.created_at DESC, b.booking_id DESC LIMIT ?4";
constexpr const char* kCheckInBooking =
    "SELECT status, showtime_id, seats FROM booking WHERE booking_id = ?";
constexpr const char* kInsertCheckIn =
    "INSERT INTO checkin (booking_id, seat_code, showtime_id, checked_in_at, nonce)"
    " VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (booking_id, seat_code) DO NOTHING";
constexpr const char* kSelectCheckIn =
    "SELECT checked_in_at, nonce FROM checkin WHERE booking_id = ?1 AND seat_code = ?2";
constexpr const char* kBookingForMail =
    "SELECT b.email, s.title, s.cinema, s.hall, s.starts_at, s.time_zone"
    "  FROM booking b JOIN showtime s ON s.showtime_id = b.showtime_id WHERE b.booking_id = ?";
constexpr const char* kCountAtDoor =
    "SELECT (SELECT count(*) FROM show_seat WHERE showtime_id = ?1 AND status = 'BOOKED'),"
    "       (SELECT count(*) FROM checkin WHERE showtime_id = ?1)"
    "  FROM showtime WHERE showtime_id = ?1";

}  // namespace boxoffice::sqlite
