-- boxoffice_hold_picks: the holds of one showtime decided together, as
-- boxoffice_hold_batch (0012, 0017) decides them, with the seat rules of API.md "Seat
-- rules beyond picking by hand" in the same decision:
--
--  * a request is a list of picks tried in order, the first that passes being held: one
--    pick for seats picked by hand, the ranked blocks for best available;
--  * a pick passes when every seat is a seat of the showtime and free (expired holds count
--    as free, seats won earlier in the batch as taken), and when none of its guards is
--    broken: a guard (seat, beyond) is broken when `seat` is free and `beyond` is not, or
--    there is no `beyond` (store.h, SeatGuard; the service builds them from the layout).
--
-- Every seat a pick or guard names is locked, so the state the rules read cannot change
-- before the transaction ends: two holds that would strand a seat together both lock it,
-- and the second sees the first.
--
-- Lock order, as in 0012: every advisory lock of the batch first, in key order, then every
-- seat row named, in seat-code order, before any request is decided.
--
-- Arguments: now_ms (NULL: the database clock), the showtime; per request its hold id,
-- customer, seat count (for the quota), TTL in ms, whether it is best available, and its
-- first pick (1-based, into the pick arrays); `codes` names every seat once, and the pick
-- arrays refer to it by position: per pick its first seat and first guard (1-based, into
-- seat_at and guard_at) and their counts; seat_at, guard_at, beyond_at (0: none).
--
-- One row per request, in order: created_ms and expires_ms when held (else NULL),
-- found_seats (how many of a hand pick's codes are seats of the showtime), taken (a hand
-- pick's seats that were not free), held (the customer's live held seats before it),
-- chosen (the pick held, 1-based within the request, or NULL), stranded (a hand pick's
-- guard seats it would leave alone, when none was taken).
CREATE FUNCTION boxoffice_hold_picks(now_ms BIGINT, showtime BIGINT, hold_ids UUID[],
                                     customers BIGINT[], seat_counts INT[], ttls_ms BIGINT[],
                                     best BOOLEAN[], first_pick INT[], max_seats INT,
                                     codes TEXT[], pick_seat INT[], pick_seats INT[],
                                     pick_guard INT[], pick_guards INT[], seat_at INT[],
                                     guard_at INT[], beyond_at INT[])
RETURNS TABLE (created_ms BIGINT, expires_ms BIGINT, found_seats INT, taken TEXT[], held BIGINT,
               chosen INT, stranded TEXT[])
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  now_ts TIMESTAMPTZ := COALESCE(to_timestamp(now_ms / 1000.0), statement_timestamp());
  start_ts TIMESTAMPTZ := date_trunc('milliseconds',
                                     COALESCE(to_timestamp(now_ms / 1000.0), statement_timestamp()));
  start_ms BIGINT := (extract(epoch FROM start_ts) * 1000)::bigint;
  n INT := cardinality(hold_ids);
  picks INT := cardinality(pick_seat);
  free BOOLEAN[];        -- free[k]: codes[k] is a seat the next request may take (NULL: none)
  cust_ids BIGINT[];
  cust_held BIGINT[];
  c_at INT;
  last_pick INT;
  p INT;
  b INT;
  ok BOOLEAN;
  found INT;
  won_codes TEXT[] := '{}';     -- every seat won
  won_by INT[] := '{}';         -- and the request that won it
  won_requests INT[] := '{}';   -- every request that won, in order
  won_starts INT[] := '{}';     -- where its seats start in won_codes
  changed INT;
BEGIN
  PERFORM boxoffice_assert(cardinality(customers) = n AND cardinality(seat_counts) = n
                           AND cardinality(ttls_ms) = n AND cardinality(best) = n
                           AND cardinality(first_pick) = n
                           AND cardinality(pick_seats) = picks AND cardinality(pick_guard) = picks
                           AND cardinality(pick_guards) = picks
                           AND cardinality(guard_at) = cardinality(beyond_at),
                           'hold picks: arrays differ in length');
  PERFORM boxoffice_assert(0 < ALL(ttls_ms), 'hold picks: a TTL that is not positive');
  PERFORM pg_advisory_xact_lock(k)
     FROM (SELECT DISTINCT hashtextextended('hold:' || showtime || ':' || c, 0) AS k
             FROM unnest(customers) AS c) keys
    ORDER BY k;
  PERFORM 1 FROM show_seat s
    WHERE s.showtime_id = showtime AND s.seat_code = ANY(codes)
    ORDER BY s.seat_code FOR NO KEY UPDATE;
  -- Under the locks, a new statement reads every named seat's latest committed state (NULL:
  -- no such seat; a seat whose state cannot be judged counts as taken).
  SELECT array_agg(CASE WHEN s.seat_code IS NULL THEN NULL
                        ELSE COALESCE(s.status = 'AVAILABLE'
                                      OR (s.status = 'HELD' AND s.hold_expires_at < now_ts), false)
                   END ORDER BY u.ord)
    INTO free
    FROM unnest(codes) WITH ORDINALITY AS u(code, ord)
    LEFT JOIN show_seat s ON s.showtime_id = showtime AND s.seat_code = u.code;
  SELECT COALESCE(array_agg(h.c), '{}'), COALESCE(array_agg(h.held), '{}')
    INTO cust_ids, cust_held
    FROM (SELECT d.c, (SELECT COALESCE(sum(cardinality(sh.seats)), 0) FROM seat_hold sh
                        WHERE sh.customer_id = d.c AND sh.showtime_id = showtime
                          AND sh.status = 'HELD' AND sh.expires_at >= now_ts) AS held
            FROM (SELECT DISTINCT u.c FROM unnest(customers) AS u(c)) d) h;
  FOR i IN 1 .. n LOOP
    c_at := array_position(cust_ids, customers[i]);
    held := cust_held[c_at];
    created_ms := NULL;
    expires_ms := NULL;
    taken := '{}';
    stranded := '{}';
    found_seats := 0;
    chosen := NULL;
    last_pick := CASE WHEN i < n THEN first_pick[i + 1] - 1 ELSE picks END;
    IF held + seat_counts[i] <= max_seats THEN
      FOR k IN first_pick[i] .. last_pick LOOP
        ok := true;
        found := 0;
        FOR j IN pick_seat[k] .. pick_seat[k] + pick_seats[k] - 1 LOOP
          p := seat_at[j];
          IF free[p] IS NOT NULL THEN found := found + 1; END IF;
          IF free[p] IS NOT TRUE THEN
            ok := false;
            EXIT WHEN best[i];
            IF free[p] IS NOT NULL THEN taken := taken || codes[p]; END IF;
          END IF;
        END LOOP;
        IF NOT best[i] THEN found_seats := found; END IF;
        IF ok THEN
          FOR g IN pick_guard[k] .. pick_guard[k] + pick_guards[k] - 1 LOOP
            p := guard_at[g];
            b := beyond_at[g];
            IF free[p] AND (b = 0 OR free[b] IS NOT TRUE) THEN
              ok := false;
              EXIT WHEN best[i];
              stranded := stranded || codes[p];
            END IF;
          END LOOP;
        END IF;
        IF ok THEN
          won_requests := won_requests || i;
          won_starts := won_starts || (cardinality(won_codes) + 1);
          FOR j IN pick_seat[k] .. pick_seat[k] + pick_seats[k] - 1 LOOP
            p := seat_at[j];
            free[p] := false;
            won_codes := won_codes || codes[p];
            won_by := won_by || i;
          END LOOP;
          cust_held[c_at] := held + seat_counts[i];
          chosen := k - first_pick[i] + 1;
          created_ms := start_ms;
          expires_ms := start_ms + ttls_ms[i];
          EXIT;
        END IF;
      END LOOP;
    END IF;
    RETURN NEXT;
  END LOOP;
  IF cardinality(won_requests) = 0 THEN
    RETURN;
  END IF;
  UPDATE show_seat s
     SET status = 'HELD',
         hold_id = hold_ids[won_by[array_position(won_codes, s.seat_code::text)]],
         customer_id = customers[won_by[array_position(won_codes, s.seat_code::text)]],
         hold_expires_at = start_ts + ttls_ms[won_by[array_position(won_codes,
                                                                          s.seat_code::text)]]
                                      * interval '1 ms',
         booking_id = NULL
   WHERE s.showtime_id = showtime AND s.seat_code = ANY(won_codes)
     AND (s.status = 'AVAILABLE' OR (s.status = 'HELD' AND s.hold_expires_at < now_ts));
  GET DIAGNOSTICS changed = ROW_COUNT;
  PERFORM boxoffice_assert(changed = cardinality(won_codes), 'partial hold');
  INSERT INTO seat_hold (hold_id, showtime_id, customer_id, seats, status, created_at,
                         expires_at)
  SELECT hold_ids[w.i], showtime, customers[w.i],
         won_codes[w.start : w.start + seat_counts[w.i] - 1],
         'HELD', start_ts, start_ts + ttls_ms[w.i] * interval '1 ms'
    FROM unnest(won_requests, won_starts) AS w(i, start);
END
$$;
