// The SQL text of PgStore's statements (the hold's is store/pg_hold_batch.cc with migration
// 0012): named constants, prepared under their names on each connection.
//
// $1 of every statement that needs the time is `now`: NULL for the database's clock, or
// epoch ms from a test's clock (see store/pg_store.h).
//
// A statement that names its row by key states the row's status, where a partial index has
// that status as its predicate, as `status IS NOT DISTINCT FROM '…'` (the same test on a NOT
// NULL column): PostgreSQL proves no index predicate from it, so no plan can read the
// partial index whole instead of the key (docs/store.md, "A job's partial index serves its
// job only"). The jobs' own partial indexes are named by a CASE form only their statements
// state.
#pragma once

#include "store/pg_common.h"

namespace boxoffice {

// $1 of every statement that needs the time: NULL for the database clock, or epoch ms.
#define BOX_NOW "COALESCE(to_timestamp($1::bigint / 1000.0), statement_timestamp())"
#define BOX_MS(x) "(extract(epoch FROM " x ") * 1000)::bigint"
#define BOX_TS(p) "to_timestamp(" p "::bigint / 1000.0)"
// Locks the requested seats of a showtime in seat-code order before anything changes them.
#define BOX_LOCK_SEATS(showtime, seats)                                                        \
  "WITH locked AS MATERIALIZED (SELECT seat_code FROM show_seat WHERE showtime_id = " showtime \
  " AND seat_code = ANY(" seats "::text[]) ORDER BY seat_code FOR UPDATE) "

constexpr const char* kMigrationLock = "SELECT pg_advisory_xact_lock(7283945012)";
constexpr const char* kCreateMigrationTable =
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT "
    "NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())";
constexpr Sql kAppliedVersions{"applied_versions", "SELECT version FROM schema_migrations"};
constexpr Sql kRecordMigration{"record_migration",
                               "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)"};

// A showtime with its prices and seats: one statement, so one transaction wherever it is
// sent (a pooled connection, or a loop's pipeline). The rows reference the showtime the
// first part inserts; their foreign keys are checked at the statement's end, when it exists.
constexpr Sql kCreateShowtime{
    "create_showtime",
    "WITH st AS (INSERT INTO showtime (title, cinema, hall, starts_at, seat_count,"
    "                                  single_seat_gaps, time_zone, sales_close_minutes,"
    "                                  refund_until_minutes)"
    "            VALUES ($1, $2, $3, " BOX_TS("$4") ", $5, $16, $17, $18, $19::int)"
    "            RETURNING showtime_id),"
    " prices AS (INSERT INTO price (showtime_id, category, amount, currency)"
    "            SELECT st.showtime_id, u.* FROM st,"
    "                   unnest($6::text[], $7::bigint[], $8::text[]) AS u),"
    " seats AS (INSERT INTO show_seat (showtime_id, seat_code, row_label, seat_number,"
    "                                  seat_order, category, accessible, aisle_after)"
    "           SELECT st.showtime_id, u.* FROM st,"
    "                  unnest($9::text[], $10::text[], $11::int[], $12::int[], $13::text[],"
    "                         $14::bool[], $15::bool[]) AS u)"
    " SELECT showtime_id FROM st"};
constexpr Sql kSelectShowtime{
    "select_showtime",
    "SELECT showtime_id, title, cinema, hall, " BOX_MS("starts_at") ", seat_count,"
    "       single_seat_gaps, time_zone, sales_close_minutes, status, refund_until_minutes,"
    "       cancel_reason FROM showtime"
    " WHERE showtime_id = $1"};
constexpr Sql kSelectPrices{"select_prices",
                            "SELECT showtime_id, category, amount, currency FROM price"
                            " WHERE showtime_id = ANY($1::bigint[])"};
constexpr Sql kListShowtimes{
    "list_showtimes",
    "SELECT showtime_id, title, cinema, hall, " BOX_MS("starts_at") ", seat_count,"
    "       single_seat_gaps, time_zone, sales_close_minutes, status, refund_until_minutes,"
    "       cancel_reason,"
    // When asked for ($8), the seats AVAILABLE now, as kSelectSeatMap says (a hold past its
    // expiry is free): the showtime's own rows of show_seat through its primary key, a
    // subplan run only when the CASE asks for it; else NULL.
    "       CASE WHEN $8::boolean THEN"
    "       (SELECT count(*) FROM show_seat ss WHERE ss.showtime_id = showtime.showtime_id"
    "           AND (ss.status = 'AVAILABLE' OR (ss.status = 'HELD' AND ss.hold_expires_at <"
    "                COALESCE(to_timestamp($7::bigint / 1000.0), statement_timestamp()))))"
    "       END"
    "  FROM showtime"
    " WHERE ($1::bigint IS NULL OR starts_at >= " BOX_TS("$1") ")"
    "   AND ($2::bigint IS NULL OR starts_at < " BOX_TS("$2") ")"
    "   AND ($3::text IS NULL OR cinema = $3::text)"
    "   AND ($4::bigint IS NULL OR (starts_at, showtime_id) > (" BOX_TS("$4") ", $5::bigint))"
    " ORDER BY starts_at, showtime_id LIMIT $6"};
constexpr Sql kCountShowtimes{"count_showtimes", "SELECT count(*) FROM showtime"};
constexpr Sql kPing{"ping", "SELECT 1"};
// `boxoffice seed` at chain scale (PgStore::SeedBatch): the batch's name first (nothing
// returned: written before), then ids from the shard's bounded sequence, the showtimes and
// prices from arrays; the seats follow by COPY.
constexpr Sql kSeedClaim{"seed_claim",
                         "INSERT INTO seed_batch (batch, showtimes, seats) VALUES ($1, $2, $3)"
                         " ON CONFLICT (batch) DO NOTHING RETURNING batch"};
constexpr Sql kSeedIds{"seed_ids",
                       "SELECT nextval(pg_get_serial_sequence('showtime', 'showtime_id'))"
                       "  FROM generate_series(1, $1::int)"};
constexpr Sql kSeedShowtimes{
    "seed_showtimes",
    "INSERT INTO showtime (showtime_id, title, cinema, hall, starts_at, seat_count)"
    " SELECT id, t, c, h, " BOX_TS("ms") ", n"
    "   FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::int[])"
    "        AS u(id, t, c, h, ms, n)"};
constexpr Sql kSeedPrices{
    "seed_prices",
    "INSERT INTO price (showtime_id, category, amount, currency)"
    " SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[])"};
constexpr const char* kSeedSeatsCopy =
    "COPY show_seat (showtime_id, seat_code, row_label, seat_number, seat_order, category,"
    " accessible, aisle_after) FROM STDIN";
constexpr Sql kDatabaseSize{"database_size", "SELECT pg_database_size(current_database())"};
constexpr Sql kShardNumber{"shard_number", "SELECT number FROM shard_identity"};
constexpr Sql kDatabaseId{"database_id", "SELECT id::text FROM database_identity"};
constexpr Sql kTakeShardNumber{"take_shard_number", "SELECT take_shard_number($1::int)"};
constexpr Sql kAudit{
    "audit",
    "SELECT"
    " (SELECT count(*) FROM show_seat s LEFT JOIN booking b ON b.booking_id = s.booking_id"
    "   WHERE s.status = 'BOOKED' AND (b.booking_id IS NULL OR b.status <> 'CONFIRMED'"
    "         OR b.showtime_id <> s.showtime_id OR NOT s.seat_code = ANY(b.seats))),"
    " (SELECT count(*) FROM booking b WHERE b.status = 'CONFIRMED' AND cardinality(b.seats) <>"
    "   (SELECT count(*) FROM show_seat s WHERE s.showtime_id = b.showtime_id"
    "     AND s.booking_id = b.booking_id AND s.status = 'BOOKED' AND s.seat_code = ANY(b.seats))),"
    " (SELECT count(*) FROM payment p WHERE p.status = 'SUCCEEDED' AND"
    "   (EXISTS (SELECT 1 FROM booking b WHERE b.payment_id = p.payment_id"
    "            AND b.status = 'CONFIRMED'))::int"
    "   + (EXISTS (SELECT 1 FROM refund r WHERE r.payment_id = p.payment_id))::int <> 1),"
    " (SELECT count(*) FROM refund WHERE status = 'PENDING'),"
    " (SELECT count(*) FROM show_seat WHERE status = 'BOOKED'),"
    " (SELECT count(*) FROM booking WHERE status = 'CONFIRMED'),"
    " (SELECT count(*) FROM payment WHERE status = 'SUCCEEDED'),"
    " (SELECT count(*) FROM booking b JOIN showtime st ON st.showtime_id = b.showtime_id"
    "   WHERE b.status = 'CONFIRMED' AND st.status = 'CANCELLED')"};
constexpr Sql kSetWaitingRoom{
    "set_waiting_room",
    "INSERT INTO waiting_room (showtime_id, enabled, active_limit, admission_ttl_ms, updated_at)"
    " SELECT showtime_id, $3, $4, $5, " BOX_NOW
    " FROM showtime WHERE showtime_id = $2"
    " ON CONFLICT (showtime_id) DO UPDATE SET enabled = excluded.enabled,"
    "   active_limit = excluded.active_limit, admission_ttl_ms = excluded.admission_ttl_ms,"
    "   updated_at = excluded.updated_at"};
constexpr Sql kEnabledWaitingRooms{
    "enabled_waiting_rooms",
    "SELECT showtime_id, active_limit, admission_ttl_ms FROM waiting_room WHERE enabled"
    " ORDER BY showtime_id"};

constexpr Sql kSelectSeatMap{
    "select_seat_map",
    "SELECT seat_code, row_label, seat_number, category,"
    "       CASE WHEN status = 'HELD' AND hold_expires_at < " BOX_NOW
    " THEN 'AVAILABLE'"
    "            ELSE status END,"
    "       " BOX_MS(BOX_NOW) ", accessible, aisle_after,"
    "       (SELECT st.status = 'CANCELLED' FROM showtime st WHERE st.showtime_id = $2)"
    "  FROM show_seat WHERE showtime_id = $2 ORDER BY seat_order"};
constexpr Sql kSelectSeatOwners{
    "select_seat_owners",
    "SELECT seat_code, expired, CASE WHEN expired THEN 'AVAILABLE' ELSE status END,"
    "       CASE WHEN expired THEN NULL ELSE hold_id::text END,"
    "       CASE WHEN expired THEN NULL ELSE customer_id END"
    "  FROM (SELECT *, (status = 'HELD' AND hold_expires_at < " BOX_NOW
    ") AS expired"
    "          FROM show_seat WHERE showtime_id = $2) s ORDER BY seat_order"};

constexpr Sql kInsertHold{
    "insert_hold",
    "INSERT INTO seat_hold (hold_id, showtime_id, customer_id, seats, status, created_at,"
    " expires_at) VALUES ($1::uuid, $2, $3, $4::text[], 'HELD', " BOX_TS("$5") ", " BOX_TS(
        "$6") ")"};
#define BOX_HOLD_COLUMNS                                                                       \
  "SELECT hold_id::text, showtime_id, customer_id, seats, status, " BOX_MS(                    \
      "created_at") ", " BOX_MS("expires_at") ", expires_at < " BOX_NOW                        \
                                              "  FROM seat_hold WHERE hold_id = $2::uuid AND " \
                                              "customer_id = $3"
constexpr Sql kSelectHold{"select_hold", BOX_HOLD_COLUMNS};
constexpr Sql kLockHold{"lock_hold", BOX_HOLD_COLUMNS " FOR UPDATE"};
constexpr Sql kNowMs{"now_ms", "SELECT " BOX_MS(BOX_NOW)};
// MoneyTx::ReadShowtime's, without a lock, FOR SHARE and FOR NO KEY UPDATE.
#define BOX_SHOWTIME_TERMS \
  "SELECT " BOX_MS("starts_at") ", " BOX_MS(                                                  \
      "starts_at - sales_close_minutes * interval '1 minute'") ", status = 'CANCELLED',"      \
                                                               " refund_until_minutes"        \
                                                               " FROM showtime WHERE showtime_id = $1"
constexpr Sql kShowtimeTerms{"showtime_terms", BOX_SHOWTIME_TERMS};
constexpr Sql kShowtimeTermsShare{"showtime_terms_share", BOX_SHOWTIME_TERMS " FOR SHARE"};
constexpr Sql kShowtimeTermsUpdate{"showtime_terms_update",
                                   BOX_SHOWTIME_TERMS " FOR NO KEY UPDATE"};
constexpr Sql kBookingShowtime{"booking_showtime",
                               "SELECT showtime_id FROM booking WHERE booking_id = $1"};
constexpr Sql kMarkShowtimeCancelled{
    "mark_showtime_cancelled",
    "UPDATE showtime SET status = 'CANCELLED', cancel_reason = $2, cancelled_at = " BOX_TS(
        "$3") " WHERE showtime_id = $1 AND status = 'SCHEDULED'"};
// The holds first (id order), then the seats (seat order): docs/payments.md's lock order.
constexpr Sql kEndShowtimeHolds{
    "end_showtime_holds",
    "WITH l AS MATERIALIZED (SELECT sh.hold_id FROM seat_hold sh"
    "   WHERE sh.hold_id IN (SELECT s.hold_id FROM show_seat s"
    "                         WHERE s.showtime_id = $1 AND s.status = 'HELD')"
    "     AND sh.status = 'HELD' ORDER BY sh.hold_id FOR UPDATE)"
    " UPDATE seat_hold sh SET status = 'RELEASED' FROM l WHERE sh.hold_id = l.hold_id"};
// Every seat of the showtime is locked (in seat order), free ones too: a hold deciding on
// them now waits for the cancel and then reads the showtime CANCELLED (boxoffice_hold_picks
// reads it again under its seat locks). The lock returns each row's latest state, which
// says which to free.
constexpr Sql kFreeShowtimeSeats{
    "free_showtime_seats",
    "WITH l AS MATERIALIZED (SELECT seat_code, status, hold_id FROM show_seat"
    "   WHERE showtime_id = $1 ORDER BY seat_code FOR NO KEY UPDATE)"
    " UPDATE show_seat s SET status = 'AVAILABLE', hold_id = NULL, customer_id = NULL,"
    "       hold_expires_at = NULL, booking_id = NULL"
    "  FROM l WHERE s.showtime_id = $1 AND s.seat_code = l.seat_code AND l.status <> 'AVAILABLE'"
    " RETURNING s.seat_code, l.status, l.hold_id::text"};
// A hold that won its seats while the cancel waited for them (kEndShowtimeHolds ran
// before it committed) ends too; a hold row locked right now (its checkout, release or
// extend, each of which then finds its seats gone) is skipped rather than waited for,
// which would take a seat_hold lock after show_seat locks.
constexpr Sql kEndHoldsAfter{
    "end_holds_after",
    "UPDATE seat_hold SET status = 'RELEASED' WHERE hold_id IN"
    " (SELECT hold_id FROM seat_hold WHERE hold_id = ANY($1::uuid[]) AND status = 'HELD'"
    "  FOR UPDATE SKIP LOCKED)"};
constexpr Sql kCountBookingCheckIns{"count_booking_checkins",
                                    "SELECT count(*) FROM checkin WHERE booking_id = $1"};
constexpr Sql kFreeBookedSeats{
    "free_booked_seats",
    "WITH l AS MATERIALIZED (SELECT seat_code FROM show_seat"
    "   WHERE showtime_id = $1 AND seat_code = ANY($2::text[]) AND booking_id = $3"
    "     AND status = 'BOOKED' ORDER BY seat_code FOR NO KEY UPDATE)"
    " UPDATE show_seat s SET status = 'AVAILABLE', hold_id = NULL, customer_id = NULL,"
    "       hold_expires_at = NULL, booking_id = NULL"
    "  FROM l WHERE s.showtime_id = $1 AND s.seat_code = l.seat_code"};
// A showtime's sales (AdminStore::GetShowtimeSales); a NULL last column: no such showtime.
constexpr Sql kShowtimeSales{
    "showtime_sales",
    "SELECT count(*) FILTER (WHERE s.status = 'AVAILABLE'"
    "                         OR (s.status = 'HELD' AND s.hold_expires_at < " BOX_NOW
    ")),"
    "       count(*) FILTER (WHERE s.status = 'HELD' AND s.hold_expires_at >= " BOX_NOW
    "),"
    "       count(*) FILTER (WHERE s.status = 'BOOKED'),"
    "       (SELECT count(*) FROM booking b"
    "         WHERE b.showtime_id = $2 AND b.status IS NOT DISTINCT FROM 'PENDING'),"
    "       (SELECT count(*) FROM booking b WHERE b.showtime_id = $2 AND b.status = 'CONFIRMED'),"
    "       (SELECT count(*) FROM booking b WHERE b.showtime_id = $2 AND b.status = 'FAILED'),"
    "       (SELECT count(*) FROM booking b WHERE b.showtime_id = $2 AND b.status = 'REFUNDED'),"
    "       (SELECT COALESCE(sum(b.amount), 0) FROM booking b"
    "         WHERE b.showtime_id = $2 AND b.status = 'CONFIRMED'),"
    "       (SELECT min(p.currency) FROM price p WHERE p.showtime_id = $2),"
    "       (SELECT count(*) FROM checkin c WHERE c.showtime_id = $2),"
    "       (SELECT st.status = 'CANCELLED' FROM showtime st WHERE st.showtime_id = $2),"
    "       r.issued, r.pending, r.refused"
    "  FROM show_seat s,"
    "       (SELECT count(*) FILTER (WHERE r.status = 'ISSUED') AS issued,"
    "               count(*) FILTER (WHERE r.status = 'PENDING' AND NOT r.refused) AS pending,"
    "               count(*) FILTER (WHERE r.status = 'PENDING' AND r.refused) AS refused"
    "          FROM booking b JOIN refund r ON r.booking_id = b.booking_id"
    "         WHERE b.showtime_id = $2) r"
    " WHERE s.showtime_id = $2"
    " GROUP BY r.issued, r.pending, r.refused"};
// Whether a showtime's sales have started (MoneyTx::SalesStarted); its seats FOR SHARE in
// seat order, every one (a count reads them all).
constexpr Sql kSalesStarted{
    "sales_started",
    "SELECT EXISTS (SELECT 1 FROM booking b WHERE b.showtime_id = $2"
    "                 AND b.status IN ('PENDING', 'CONFIRMED'))"
    "    OR (SELECT count(*) FILTER (WHERE l.status = 'BOOKED'"
    "                                 OR (l.status = 'HELD' AND l.hold_expires_at >= " BOX_NOW
    "))"
    "          FROM (SELECT s.status, s.hold_expires_at FROM show_seat s"
    "                 WHERE s.showtime_id = $2 ORDER BY s.seat_code FOR SHARE) l) > 0"};
constexpr Sql kUpdateShowtime{
    "update_showtime",
    "UPDATE showtime SET title = $2, starts_at = " BOX_TS("$3") ", refund_until_minutes = $4::int"
    " WHERE showtime_id = $1"};
constexpr Sql kUpdatePrices{
    "update_prices",
    "UPDATE price p SET amount = u.amount, currency = u.currency"
    "  FROM unnest($2::text[], $3::bigint[], $4::text[]) AS u(category, amount, currency)"
    " WHERE p.showtime_id = $1 AND p.category = u.category"};
constexpr Sql kInsertAdminChange{
    "insert_admin_change",
    "INSERT INTO admin_audit (showtime_id, actor, action, before, after, at)"
    " VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, " BOX_TS("$6") ")"};
constexpr Sql kListAdminChanges{
    "list_admin_changes",
    "SELECT audit_id, showtime_id, actor, action, before::text, after::text, " BOX_MS(
        "at") "  FROM admin_audit WHERE showtime_id = $1 ORDER BY audit_id DESC LIMIT $2"};
constexpr Sql kPendingBookingOfHold{
    "pending_booking_of_hold",
    "SELECT booking_id FROM booking WHERE hold_id = $1::uuid AND status = 'PENDING'"};
constexpr Sql kRearmSeats{
    "rearm_seats",
    BOX_LOCK_SEATS("$2", "$3")
    "UPDATE show_seat s SET hold_expires_at = " BOX_TS("$5")
    "  FROM locked"
    " WHERE s.showtime_id = $2 AND s.seat_code = locked.seat_code"
    "   AND s.hold_id = $4::uuid AND s.status = 'HELD' AND s.hold_expires_at >= " BOX_NOW};
constexpr Sql kSeatPrices{
    "seat_prices",
    "SELECT p.amount, p.currency"
    "  FROM show_seat s JOIN price p ON p.showtime_id = s.showtime_id AND p.category = s.category"
    " WHERE s.showtime_id = $1 AND s.seat_code = ANY($2::text[])"};
constexpr Sql kInsertBooking{
    "insert_booking",
    "INSERT INTO booking (hold_id, showtime_id, customer_id, seats, status, amount, currency,"
    " created_at, updated_at) VALUES ($1::uuid, $2, $3, $4::text[], 'PENDING', $5, $6, " BOX_TS(
        "$7") ", " BOX_TS("$7") ") RETURNING booking_id"};
constexpr Sql kAttachSession{
    "attach_session",
    "UPDATE booking SET session_id = $1, payment_url = $2, payment_expires_at = " BOX_TS("$3") ","
    "       email = COALESCE($5, email), updated_at = statement_timestamp()"
    " WHERE booking_id = $4 AND status IS NOT DISTINCT FROM 'PENDING'"
    "   AND (session_id IS NULL OR session_id = $1)"};
#define BOX_BOOKING_SELECT                                                                       \
  "SELECT booking_id, hold_id::text, showtime_id, customer_id, seats, status, amount, currency," \
  " session_id, payment_url, " BOX_MS("payment_expires_at") ", payment_id, " BOX_MS(             \
      "created_at") " FROM booking"
#define BOX_BOOKING_COLUMNS BOX_BOOKING_SELECT " WHERE booking_id = $1"
constexpr Sql kSelectBooking{"select_booking", BOX_BOOKING_COLUMNS};
// Reads of several bookings at once (store/pg_booking_reads.h): those that exist, any order.
constexpr Sql kSelectBookings{"select_bookings",
                              BOX_BOOKING_SELECT " WHERE booking_id = ANY($1::bigint[])"};
constexpr Sql kLockBooking{"lock_booking", BOX_BOOKING_COLUMNS " FOR UPDATE"};
constexpr Sql kShowtimeBookings{
    "showtime_bookings", BOX_BOOKING_SELECT
    " WHERE showtime_id = $1 AND ($2::text IS NULL OR status = $2::text)"
    "   AND booking_id > $3 ORDER BY booking_id LIMIT $4"};
constexpr Sql kLockLiveBookings{"lock_live_bookings", BOX_BOOKING_SELECT
                                " WHERE showtime_id = $1 AND status IN ('PENDING', 'CONFIRMED')"
                                " ORDER BY booking_id FOR UPDATE"};
constexpr Sql kInsertPayment{"insert_payment",
                             "INSERT INTO payment (payment_id, session_id, booking_id, status, "
                             "amount, currency, received_at)"
                             " VALUES ($1, $2, $3, $4, $5, $6, " BOX_TS(
                                 "$7") ") ON CONFLICT (payment_id) DO NOTHING RETURNING 1"};
// The seeds' confirm statement, with the lock order explicit: HELD → BOOKED only where the
// seat is this hold's and the hold has not expired, for all of the booking's seats or none
// (read under the lock: in READ COMMITTED an UPDATE tests its WHERE clause against the
// statement's snapshot and re-tests only rows that passed, so a seat changed by a
// transaction that committed while we waited for its lock would be judged on stale data).
constexpr Sql kConfirmSeats{
    "confirm_seats",
    "WITH locked AS MATERIALIZED ("
    "  SELECT seat_code,"
    "         (status = 'HELD' AND hold_id = $4::uuid AND hold_expires_at >= " BOX_NOW
    ") AS ours"
    "    FROM show_seat WHERE showtime_id = $2 AND seat_code = ANY($3::text[])"
    "   ORDER BY seat_code FOR NO KEY UPDATE),"
    " verdict AS (SELECT count(*) FILTER (WHERE ours) = $6::int AS all_ours FROM locked),"
    " upd AS ("
    "  UPDATE show_seat s SET status = 'BOOKED', booking_id = $5, hold_expires_at = NULL"
    "    FROM locked, verdict"
    "   WHERE verdict.all_ours AND locked.ours"
    "     AND s.showtime_id = $2 AND s.seat_code = locked.seat_code"
    "  RETURNING 1)"
    " SELECT count(*), boxoffice_assert(count(*) IN (0, $6::int), 'partial confirm') FROM upd"};
constexpr Sql kMarkHoldBooked{"mark_hold_booked",
                              "UPDATE seat_hold SET status = 'BOOKED' WHERE hold_id = $1::uuid"};
constexpr Sql kUpdateBooking{
    "update_booking",
    "UPDATE booking SET status = $1, payment_id = COALESCE($2, payment_id), updated_at = " BOX_TS(
        "$3") " WHERE booking_id = $4"};
constexpr Sql kInsertRefund{
    "insert_refund",
    "INSERT INTO refund (refund_id, payment_id, booking_id, amount, currency, status, created_at,"
    " next_attempt_at, reason) VALUES ($1::uuid, $2, $3, $4, $5, 'PENDING', " BOX_TS(
        "$6") ", " BOX_TS("$6") ", $7)"};
// MoneyTx::RefundBookings in three statements for any number of bookings: $2.. arrays of
// one element per booking, in the same order.
constexpr Sql kRefundBookings{
    "refund_bookings", "UPDATE booking SET status = 'REFUNDED', updated_at = " BOX_TS(
                           "$1") " WHERE booking_id = ANY($2::bigint[]) AND status = 'CONFIRMED'"};
constexpr Sql kInsertRefunds{
    "insert_refunds",
    "INSERT INTO refund (refund_id, payment_id, booking_id, amount, currency, status, created_at,"
    " next_attempt_at, reason)"
    " SELECT r.id::uuid, r.payment, r.booking, r.amount, r.currency, 'PENDING', " BOX_TS("$1")
    ", " BOX_TS("$1") ", r.reason"
    "   FROM unnest($2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::text[], $7::text[])"
    "        AS r(id, payment, booking, amount, currency, reason)"};
constexpr Sql kInsertEvents{
    "insert_events",
    "INSERT INTO outbox (event_id, type, key, payload, created_at)"
    " SELECT e.id::uuid, $2, e.key, e.payload, " BOX_TS("$1")
    "   FROM unnest($3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS e(id, key, payload, n)"
    "  ORDER BY e.n"};
constexpr Sql kInsertEvent{"insert_event",
                           "INSERT INTO outbox (event_id, type, key, payload, created_at)"
                           " VALUES ($1::uuid, $2, $3, $4, " BOX_TS("$5") ")"};
constexpr Sql kPendingEvents{
    "pending_events",
    "SELECT id, event_id::text, type, key, payload, " BOX_MS("created_at") " FROM outbox"
    " WHERE published_at IS NULL AND id > $1 ORDER BY id LIMIT $2"};
// Fenced: the lease row is share-locked by the mark, so a takeover waits for it, and the
// mark happens only while the lease is this owner's and unexpired. Returns 1 if it was.
constexpr Sql kMarkPublished{
    "mark_published",
    "WITH fence AS MATERIALIZED (SELECT 1 FROM relay_lease"
    "  WHERE name = $3 AND owner = $4 AND until >= " BOX_NOW
    " FOR SHARE),"
    " upd AS (UPDATE outbox SET published_at = " BOX_NOW
    "  WHERE published_at IS NULL AND id = ANY($2::bigint[]) AND EXISTS (SELECT 1 FROM fence)"
    "  RETURNING 1)"
    " SELECT (SELECT count(*) FROM fence), (SELECT count(*) FROM upd)"};
constexpr Sql kPendingMail{
    "pending_mail",
    "SELECT id, event_id::text, type, key, payload, " BOX_MS("created_at") " FROM outbox"
    " WHERE mail_pending ORDER BY id LIMIT $1"};
constexpr Sql kCountPendingMail{"count_pending_mail",
                                "SELECT count(*) FROM outbox WHERE mail_pending"};
// Fenced as kMarkPublished is, by the e-mail sender's lease.
constexpr Sql kMarkMailDone{
    "mark_mail_done",
    "WITH fence AS MATERIALIZED (SELECT 1 FROM relay_lease"
    "  WHERE name = $2 AND owner = $3 AND until >= " BOX_NOW
    " FOR SHARE),"
    " upd AS (UPDATE outbox SET mail_pending = false"
    "  WHERE id = $4 AND mail_pending AND EXISTS (SELECT 1 FROM fence) RETURNING 1)"
    " SELECT (SELECT count(*) FROM fence), (SELECT count(*) FROM upd)"};
constexpr Sql kExpirePendingMail{
    "expire_pending_mail",
    "WITH fence AS MATERIALIZED (SELECT 1 FROM relay_lease"
    "  WHERE name = $2 AND owner = $3 AND until >= " BOX_NOW
    " FOR SHARE),"
    " old AS (SELECT id FROM outbox WHERE mail_pending AND created_at < " BOX_NOW
    " - $4::bigint * interval '1 ms' ORDER BY id LIMIT $5),"
    " upd AS (UPDATE outbox SET mail_pending = false"
    "  WHERE id IN (SELECT id FROM old) AND mail_pending AND EXISTS (SELECT 1 FROM fence)"
    "  RETURNING 1)"
    " SELECT (SELECT count(*) FROM fence), (SELECT count(*) FROM upd)"};
constexpr Sql kRefundBooking{"refund_booking",
                             "SELECT booking_id, reason FROM refund WHERE refund_id = $1::uuid"};
constexpr Sql kMarkRefundIssued{
    "mark_refund_issued",
    "UPDATE refund SET status = 'ISSUED', gateway_refund_id = $1, issued_at = " BOX_TS(
        "$2") " WHERE refund_id = $3::uuid AND status IS NOT DISTINCT FROM 'PENDING' RETURNING 1"};
// SKIP LOCKED: instances claiming at once take disjoint rows and never wait on each other.
// `(CASE WHEN status = 'PENDING' THEN true END)` names idx_booking_reconcile (migration 0034).
constexpr Sql kClaimStale{
    "claim_stale",
    "WITH stale AS MATERIALIZED (SELECT booking_id FROM booking"
    "  WHERE (CASE WHEN status = 'PENDING' THEN true END) AND (payment_expires_at <= " BOX_NOW
    "        OR created_at < " BOX_NOW
    " - $2::bigint * interval '1 ms')"
    "    AND (claimed_until IS NULL OR claimed_until < " BOX_NOW
    ")"
    "  ORDER BY claimed_until NULLS FIRST, created_at LIMIT $4 FOR UPDATE SKIP LOCKED) "
    "UPDATE booking b SET claimed_until = " BOX_NOW
    " + $3::bigint * interval '1 ms'"
    "  FROM stale WHERE b.booking_id = stale.booking_id RETURNING b.booking_id"};
// (The rows are locked in booking-id order first, as a confirmation batch locks them.)
constexpr Sql kReleaseClaims{
    "release_claims",
    "WITH locked AS MATERIALIZED (SELECT booking_id FROM booking"
    "  WHERE booking_id = ANY($1::bigint[]) ORDER BY booking_id FOR UPDATE) "
    "UPDATE booking b SET claimed_until = NULL FROM locked"
    " WHERE b.booking_id = locked.booking_id AND b.status IS NOT DISTINCT FROM 'PENDING'"};
constexpr Sql kLockKey{
    "lock_key",
    "SELECT fingerprint, state, lock_token::text, " BOX_MS("locked_until") ", booking_id, "
    BOX_MS("hold_expiry_before") ", " BOX_MS("hold_expiry_after") ", response_status,"
    " response_body FROM idempotency_key WHERE customer_id = $1 AND key = $2 FOR UPDATE"};
constexpr Sql kInsertKey{
    "insert_key",
    "INSERT INTO idempotency_key (customer_id, key, fingerprint, state, lock_token, locked_until,"
    " created_at, updated_at)"
    " VALUES ($1, $2, $3, $4, $5::uuid, " BOX_TS("$6") ", " BOX_TS("$7") ", " BOX_TS("$7") ")"
    " ON CONFLICT (customer_id, key) DO NOTHING RETURNING 1"};
constexpr Sql kUpdateKey{
    "update_key",
    "UPDATE idempotency_key SET state = $3, lock_token = $4::uuid, locked_until = " BOX_TS("$5") ","
    "       booking_id = $6, hold_expiry_before = " BOX_TS("$7") ","
    "       hold_expiry_after = " BOX_TS("$8") ", response_status = $9, response_body = $10,"
    "       updated_at = " BOX_TS("$11")
    " WHERE customer_id = $1 AND key = $2"};
constexpr Sql kDeleteKey{"delete_key",
                         "DELETE FROM idempotency_key WHERE customer_id = $1 AND key = $2"};
constexpr Sql kPurgeKeys{"purge_keys",
                         "DELETE FROM idempotency_key WHERE (customer_id, key) IN"
                         " (SELECT customer_id, key FROM idempotency_key"
                         "   WHERE created_at < " BOX_NOW
                         " - $2::bigint * interval '1 ms'"
                         "   LIMIT $3 FOR UPDATE SKIP LOCKED)"};
// A hold's release and extension, one statement each (migration 0015): the hold's row as
// BOX_HOLD_COLUMNS reads it (the extension's after an outcome column).
constexpr Sql kReleaseHoldFn{"release_hold_fn",
                             "SELECT * FROM boxoffice_release_hold($1::bigint, $2::uuid, $3)"};
constexpr Sql kExtendHoldFn{
    "extend_hold_fn", "SELECT * FROM boxoffice_extend_hold($1::bigint, $2::uuid, $3, $4, $5)"};
// Checkout's last phase in one statement off the loops (migrations 0013, 0029; on the
// loops, batched: pg_checkout_batch.h).
constexpr Sql kCheckoutFinish{
    "checkout_finish",
    "SELECT boxoffice_checkout_finish($1, $2, $3, $4::uuid, $5, $6, $7, $8, $9, $10)"};
// Checkout undone: the seats this hold still has until `from` get `to` back.
constexpr Sql kResetSeatsExpiry{
    "reset_seats_expiry",
    BOX_LOCK_SEATS("$1", "$2")
    "UPDATE show_seat s SET hold_expires_at = " BOX_TS("$5")
    "  FROM locked"
    " WHERE s.showtime_id = $1 AND s.seat_code = locked.seat_code"
    "   AND s.hold_id = $3::uuid AND s.status = 'HELD' AND s.hold_expires_at = " BOX_TS("$4")};
constexpr Sql kCountRecentBookings{"count_recent_bookings",
                                   "SELECT status, count(*) FROM booking"
                                   " WHERE created_at >= " BOX_NOW
                                   " - $2::bigint * interval '1 ms' GROUP BY status"};
constexpr Sql kAcquireLease{
    "acquire_lease",
    "INSERT INTO relay_lease (name, owner, until)"
    " VALUES ($2, $3, " BOX_NOW
    " + $4::bigint * interval '1 ms')"
    " ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, until = excluded.until"
    " WHERE relay_lease.owner = excluded.owner OR relay_lease.until < " BOX_NOW " RETURNING owner"};
constexpr Sql kPendingRefunds{
    "pending_refunds",
    "SELECT refund_id::text, payment_id, booking_id, amount, currency, attempts FROM refund"
    " WHERE status = 'PENDING' AND next_attempt_at <= " BOX_NOW
    " ORDER BY next_attempt_at LIMIT $2"};
constexpr Sql kRefundAttemptFailed{
    "refund_attempt_failed",
    "UPDATE refund SET attempts = attempts + 1, refused = $2, last_error = $3,"
    "       next_attempt_at = " BOX_NOW
    " + $4::bigint * interval '1 ms'"
    " WHERE refund_id = $5::uuid AND status IS NOT DISTINCT FROM 'PENDING'"};
constexpr Sql kRefundBacklog{
    "refund_backlog",
    "SELECT count(*) FILTER (WHERE NOT refused), count(*) FILTER (WHERE refused)"
    "  FROM refund WHERE status = 'PENDING'"};
// The showtimes cancelled in the last $2 ms, the latest $3, with their refunds by state
// (RefundBacklog::cancelled; idx_showtime_cancelled_at, named by its predicate's CASE form,
// migration 0034; idx_booking_showtime, idx_refund_booking).
constexpr Sql kCancelledRefunds{
    "cancelled_refunds",
    "SELECT st.showtime_id,"
    "       count(r.refund_id) FILTER (WHERE r.status = 'ISSUED'),"
    "       count(r.refund_id) FILTER (WHERE r.status = 'PENDING' AND NOT r.refused),"
    "       count(r.refund_id) FILTER (WHERE r.status = 'PENDING' AND r.refused)"
    "  FROM (SELECT showtime_id FROM showtime"
    "         WHERE (CASE WHEN status = 'CANCELLED' THEN true END)"
    "           AND cancelled_at >= " BOX_NOW
    " - $2::bigint * interval '1 ms'"
    "         ORDER BY cancelled_at DESC LIMIT $3) st"
    "  LEFT JOIN booking b ON b.showtime_id = st.showtime_id"
    "  LEFT JOIN refund r ON r.booking_id = b.booking_id"
    " GROUP BY st.showtime_id ORDER BY st.showtime_id"};
constexpr Sql kSetHoldExpiry{"set_hold_expiry", "UPDATE seat_hold SET expires_at = " BOX_TS(
                                                    "$1") " WHERE hold_id = $2::uuid"};
// The seeds' sweeper, batched; SKIP LOCKED means it never waits, on any number of instances.
// Its `(CASE WHEN status = 'HELD' THEN true END)` is idx_show_seat_sweep's predicate word for
// word: only a statement that states it can use that index (migration 0034).
constexpr Sql kSweepExpired{
    "sweep_expired",
    "WITH expired AS MATERIALIZED (SELECT showtime_id, seat_code FROM show_seat"
    "  WHERE (CASE WHEN status = 'HELD' THEN true END) AND hold_expires_at < " BOX_NOW
    " LIMIT $2 FOR UPDATE SKIP LOCKED) "
    "UPDATE show_seat s SET status = 'AVAILABLE', hold_id = NULL, customer_id = NULL,"
    "       hold_expires_at = NULL"
    "  FROM expired"
    " WHERE s.showtime_id = expired.showtime_id AND s.seat_code = expired.seat_code"
    "   AND s.status = 'HELD' AND s.hold_expires_at < " BOX_NOW
    " RETURNING s.showtime_id, s.seat_code"};

// Tickets and the door (migration 0029, store/ticket_store.h).
constexpr Sql kCheckIn{"checkin",
                       "SELECT outcome, at_ms FROM boxoffice_checkin($1, $2, $3, $4, $5)"};
// A customer's bookings with their showtimes, newest first by (created_at in ms, id), after
// the cursor ($2, $3; NULL: from the newest). Read by customer id (idx_booking_customer):
// a customer has few bookings, ordered in memory.
constexpr Sql kCustomerBookings{
    "customer_bookings",
    "SELECT b.booking_id, b.hold_id::text, b.showtime_id, b.customer_id, b.seats, b.status,"
    "       b.amount, b.currency, b.session_id, b.payment_url, " BOX_MS(
        "b.payment_expires_at") ", b.payment_id, " BOX_MS("b.created_at") ","
    "       s.title, " BOX_MS("s.starts_at")
    "  FROM booking b JOIN showtime s ON s.showtime_id = b.showtime_id"
    " WHERE b.customer_id = $1"
    "   AND ($2::bigint IS NULL OR (" BOX_MS("b.created_at") ", b.booking_id) < ($2::bigint, $3::bigint))"
    " ORDER BY " BOX_MS("b.created_at") " DESC, b.booking_id DESC LIMIT $4"};
constexpr Sql kBookingForMail{
    "booking_for_mail",
    "SELECT b.email, s.title, s.cinema, s.hall, " BOX_MS("s.starts_at") ", s.time_zone"
    "  FROM booking b JOIN showtime s ON s.showtime_id = b.showtime_id WHERE b.booking_id = $1"};
constexpr Sql kCountAtDoor{
    "count_at_door",
    "SELECT (SELECT count(*) FROM show_seat WHERE showtime_id = $1 AND status = 'BOOKED'),"
    "       (SELECT count(*) FROM checkin WHERE showtime_id = $1)"
    "  FROM showtime WHERE showtime_id = $1"};

}  // namespace boxoffice
