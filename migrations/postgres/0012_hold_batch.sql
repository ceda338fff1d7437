-- Holds of one showtime decided together: one statement, one transaction, one round of row
-- locks for every hold request that arrived while the previous statement for the showtime
-- was in flight. A single hold is a batch of one.
--
-- Each request is decided in arrival order and all or nothing, exactly as if it ran alone
-- after the ones before it (they are in the same transaction, so it sees their changes):
--  1. the quota (HOLD_LIMIT) counts the customer's live held seats, earlier requests of the
--     batch included, under the per-(showtime, customer) advisory lock of 0008;
--  2. the seats' state is read under the row locks (expired holds count as free); every
--     requested seat must exist and be free;
--  3. then the conditional UPDATE, whose changed-row count boxoffice_assert checks (all or
--     nothing, enforced in the database), and the seat_hold row.
--
-- Lock order, the same for every statement that takes both (so batches never deadlock with
-- each other or with other statements): every advisory lock of the batch first, in the
-- order of their keys, then every seat row of the batch, in seat-code order, before any
-- request is decided. Row-lock holders never wait for an advisory lock.
--
-- Arguments: now_ms (NULL: the database clock), the showtime, then per request its hold id,
-- customer, seat count, and TTL in ms; `seats` is every request's seats one after the other
-- (seat_counts says where each request's end). One row per request, in order: created_ms
-- and expires_ms when held (else NULL), found_seats (how many of its codes are seats of the
-- showtime), taken (its seats that were not free, sorted), held (the customer's live held
-- seats before it).
CREATE FUNCTION boxoffice_hold_batch(now_ms BIGINT, showtime BIGINT, hold_ids UUID[],
                                     customers BIGINT[], seat_counts INT[], seats TEXT[],
                                     ttls_ms BIGINT[], max_seats INT)
RETURNS TABLE (created_ms BIGINT, expires_ms BIGINT, found_seats INT, taken TEXT[], held BIGINT)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  now_ts TIMESTAMPTZ := COALESCE(to_timestamp(now_ms / 1000.0), statement_timestamp());
  start_ts TIMESTAMPTZ := date_trunc('milliseconds',
                                     COALESCE(to_timestamp(now_ms / 1000.0), statement_timestamp()));
  n INT := cardinality(hold_ids);
  pos INT := 1;
  mine TEXT[];
  changed INT;
  ends TIMESTAMPTZ;
BEGIN
  PERFORM boxoffice_assert(cardinality(customers) = n AND cardinality(seat_counts) = n
                           AND cardinality(ttls_ms) = n, 'hold batch arrays differ in length');
  PERFORM pg_advisory_xact_lock(k)
     FROM (SELECT DISTINCT hashtextextended('hold:' || showtime || ':' || c, 0) AS k
             FROM unnest(customers) AS c) keys
    ORDER BY k;
  PERFORM 1 FROM show_seat s
    WHERE s.showtime_id = showtime AND s.seat_code = ANY(seats)
    ORDER BY s.seat_code FOR NO KEY UPDATE;
  FOR i IN 1 .. n LOOP
    mine := seats[pos : pos + seat_counts[i] - 1];
    pos := pos + seat_counts[i];
    created_ms := NULL;
    expires_ms := NULL;
    taken := '{}';
    found_seats := 0;
    held := boxoffice_customer_held(showtime, customers[i], now_ts);
    IF held + seat_counts[i] <= max_seats THEN
      SELECT count(*),
             COALESCE(array_agg(s.seat_code::text ORDER BY s.seat_code)
                        FILTER (WHERE NOT (s.status = 'AVAILABLE'
                                           OR (s.status = 'HELD' AND s.hold_expires_at < now_ts))),
                      '{}')
        INTO found_seats, taken
        FROM show_seat s WHERE s.showtime_id = showtime AND s.seat_code = ANY(mine);
      IF found_seats = seat_counts[i] AND cardinality(taken) = 0 THEN
        ends := start_ts + ttls_ms[i] * interval '1 ms';
        UPDATE show_seat s
           SET status = 'HELD', hold_id = hold_ids[i], customer_id = customers[i],
               hold_expires_at = ends, booking_id = NULL
         WHERE s.showtime_id = showtime AND s.seat_code = ANY(mine)
           AND (s.status = 'AVAILABLE' OR (s.status = 'HELD' AND s.hold_expires_at < now_ts));
        GET DIAGNOSTICS changed = ROW_COUNT;
        PERFORM boxoffice_assert(changed = seat_counts[i], 'partial hold');
        INSERT INTO seat_hold (hold_id, showtime_id, customer_id, seats, status, created_at,
                               expires_at)
        VALUES (hold_ids[i], showtime, customers[i], mine, 'HELD', start_ts, ends);
        created_ms := (extract(epoch FROM start_ts) * 1000)::bigint;
        expires_ms := (extract(epoch FROM ends) * 1000)::bigint;
      END IF;
    END IF;
    RETURN NEXT;
  END LOOP;
END
$$;
