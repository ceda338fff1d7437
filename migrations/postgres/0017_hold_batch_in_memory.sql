-- boxoffice_hold_batch (0012) decided in memory: the same arguments, results, locks and
-- decisions, in five statements per batch whatever its size instead of two plus five per
-- request. Under a storm PostgreSQL spent most of a hold's time starting the executor for
-- the per-request statements, not in the rows they touched.
--
--  1. the advisory locks of every customer of the batch, in key order (as before);
--  2. every requested seat of the batch, locked in seat-code order, read with its state:
--     the locking read returns each row's latest committed version;
--  3. each customer's live held seats, counted once, after the locks (a fresh snapshot);
--  4. every request decided in arrival order on those arrays: the quota, then every seat
--     found and free (expired holds count as free), seats won by earlier requests of the
--     batch counting as taken and their seats as held;
--  5. one UPDATE of every seat won (its changed-row count asserted: all or nothing, in the
--     database) and one INSERT of every hold won.
CREATE OR REPLACE FUNCTION boxoffice_hold_batch(now_ms BIGINT, showtime BIGINT, hold_ids UUID[],
                                                customers BIGINT[], seat_counts INT[],
                                                seats TEXT[], ttls_ms BIGINT[], max_seats INT)
RETURNS TABLE (created_ms BIGINT, expires_ms BIGINT, found_seats INT, taken TEXT[], held BIGINT)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  now_ts TIMESTAMPTZ := COALESCE(to_timestamp(now_ms / 1000.0), statement_timestamp());
  start_ts TIMESTAMPTZ := date_trunc('milliseconds',
                                     COALESCE(to_timestamp(now_ms / 1000.0), statement_timestamp()));
  start_ms BIGINT := (extract(epoch FROM start_ts) * 1000)::bigint;
  n INT := cardinality(hold_ids);
  pos INT := 1;
  codes TEXT[];          -- the batch's seats that exist, in seat-code order
  free BOOLEAN[];        -- free[k]: codes[k] may be held by the next request
  cust_ids BIGINT[];     -- each customer of the batch once
  cust_held BIGINT[];    -- and their live held seats, this batch's wins included
  c_at INT;
  found_at INT[];        -- a request's seats found, as positions in codes
  taken_at INT[];        -- those of them not free, in seat-code order
  p INT;
  won_codes TEXT[] := '{}';     -- every seat won
  won_by INT[] := '{}';         -- and the request that won it
  won_requests INT[] := '{}';   -- every request that won, in order
  won_starts INT[] := '{}';     -- and where its seats start in seats
  changed INT;
BEGIN
  PERFORM boxoffice_assert(cardinality(customers) = n AND cardinality(seat_counts) = n
                           AND cardinality(ttls_ms) = n, 'hold batch arrays differ in length');
  -- (A hold that ends before it starts would count as taken here and as free to the
  -- general path: no such hold is ever asked for.)
  PERFORM boxoffice_assert(0 < ALL(ttls_ms), 'hold batch: a TTL that is not positive');
  PERFORM pg_advisory_xact_lock(k)
     FROM (SELECT DISTINCT hashtextextended('hold:' || showtime || ':' || c, 0) AS k
             FROM unnest(customers) AS c) keys
    ORDER BY k;
  SELECT COALESCE(array_agg(l.code ORDER BY l.code), '{}'),
         COALESCE(array_agg(l.free ORDER BY l.code), '{}')
    INTO codes, free
    FROM (SELECT s.seat_code::text AS code,
                 (s.status = 'AVAILABLE' OR (s.status = 'HELD' AND s.hold_expires_at < now_ts))
                   AS free
            FROM show_seat s
           WHERE s.showtime_id = showtime AND s.seat_code = ANY(seats)
           ORDER BY s.seat_code FOR NO KEY UPDATE) l;
  -- (ORDER BY l.code re-sorts by the column's collation, as the locking order did.)
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
    found_seats := 0;
    IF held + seat_counts[i] <= max_seats THEN
      found_at := '{}';
      taken_at := '{}';
      FOR j IN pos .. pos + seat_counts[i] - 1 LOOP
        p := array_position(codes, seats[j]);
        -- (A code named twice is one seat found, as a row matched twice is one row.)
        IF p IS NOT NULL AND NOT p = ANY(found_at) THEN
          found_at := found_at || p;
          IF NOT free[p] THEN taken_at := taken_at || p; END IF;
        END IF;
      END LOOP;
      found_seats := cardinality(found_at);
      -- Seat-code order: positions in codes, sorted (at most max_seats of them).
      FOR a IN 2 .. cardinality(taken_at) LOOP
        p := taken_at[a];
        FOR b IN REVERSE a - 1 .. 1 LOOP
          EXIT WHEN taken_at[b] < p;
          taken_at[b + 1] := taken_at[b];
          taken_at[b] := p;
        END LOOP;
      END LOOP;
      FOREACH p IN ARRAY taken_at LOOP
        taken := taken || codes[p];
      END LOOP;
      IF found_seats = seat_counts[i] AND cardinality(taken_at) = 0 THEN
        FOREACH p IN ARRAY found_at LOOP
          free[p] := false;
          won_codes := won_codes || codes[p];
          won_by := won_by || i;
        END LOOP;
        won_requests := won_requests || i;
        won_starts := won_starts || pos;
        cust_held[c_at] := held + seat_counts[i];
        created_ms := start_ms;
        expires_ms := start_ms + ttls_ms[i];
      END IF;
    END IF;
    pos := pos + seat_counts[i];
    RETURN NEXT;
  END LOOP;
  IF cardinality(won_requests) = 0 THEN
    RETURN;
  END IF;
  -- Each seat's request by its place in won_codes (the rows are named by key only, so no
  -- plan wanders through the showtime's other seats).
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
  SELECT hold_ids[w.i], showtime, customers[w.i], seats[w.start : w.start + seat_counts[w.i] - 1],
         'HELD', start_ts, start_ts + ttls_ms[w.i] * interval '1 ms'
    FROM unnest(won_requests, won_starts) AS w(i, start);
END
$$;
