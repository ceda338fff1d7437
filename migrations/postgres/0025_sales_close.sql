-- Sales close, and the cinema's time zone (API.md "Showtimes and the seat map").
--
-- * time_zone: the IANA name of the cinema's local time, in which pages show the
--   showtime's times ('UTC' for every existing showtime). Times in the database stay UTC.
-- * sales_close_minutes: sales close this many minutes before the start (0: at the start;
--   at most a week). Every existing showtime closes at its start.
--
-- Sales close inside the decision, on the database's clock, like expiry (DESIGN.md,
-- "Sales close inside the decision"): boxoffice_hold_picks refuses every request of a
-- closed showtime, with the new column `closed`; boxoffice_checkout_begin leaves a closed
-- showtime's checkout to the general path (outcome 'slow'), which refuses it. A payment
-- for a booking whose hold still lives is honoured: confirmation does not look at the
-- close.
ALTER TABLE showtime
    ADD COLUMN time_zone TEXT NOT NULL DEFAULT 'UTC'
        CHECK (length(time_zone) BETWEEN 1 AND 64),
    ADD COLUMN sales_close_minutes INT NOT NULL DEFAULT 0
        CHECK (sales_close_minutes BETWEEN 0 AND 10080);

-- The hold decision of 0024, with sales close. Its result gains a column, so it is
-- replaced by DROP and CREATE in this migration's one transaction.
DROP FUNCTION boxoffice_hold_picks(BIGINT, BIGINT, UUID[], BIGINT[], INT[], BIGINT[], BOOLEAN[],
                                   INT[], INT, TEXT[], INT[], INT[], INT[], INT[], INT[], INT[],
                                   INT[]);

-- (The design note of 0024 holds; `closed` is true for every request once sales have closed,
-- and nothing is held then.)
CREATE FUNCTION boxoffice_hold_picks(now_ms BIGINT, showtime BIGINT, hold_ids UUID[],
                                     customers BIGINT[], seat_counts INT[], ttls_ms BIGINT[],
                                     best BOOLEAN[], first_pick INT[], max_seats INT,
                                     codes TEXT[], pick_seat INT[], pick_seats INT[],
                                     pick_guard INT[], pick_guards INT[], seat_at INT[],
                                     guard_at INT[], beyond_at INT[])
RETURNS TABLE (created_ms BIGINT, expires_ms BIGINT, found_seats INT, taken TEXT[], held BIGINT,
               chosen INT, stranded TEXT[], closed BOOLEAN)
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
  closes_at TIMESTAMPTZ;
BEGIN
  PERFORM boxoffice_assert(cardinality(customers) = n AND cardinality(seat_counts) = n
                           AND cardinality(ttls_ms) = n AND cardinality(best) = n
                           AND cardinality(first_pick) = n
                           AND cardinality(pick_seats) = picks AND cardinality(pick_guard) = picks
                           AND cardinality(pick_guards) = picks
                           AND cardinality(guard_at) = cardinality(beyond_at),
                           'hold picks: arrays differ in length');
  PERFORM boxoffice_assert(0 < ALL(ttls_ms), 'hold picks: a TTL that is not positive');
  -- Sales close inside the decision, on the database's clock, like expiry: once they have,
  -- every request is refused (closed) and nothing is locked or held. (An unknown showtime
  -- has no close: its requests find no seats, as before.)
  SELECT st.starts_at - st.sales_close_minutes * interval '1 minute' INTO closes_at
    FROM showtime st WHERE st.showtime_id = showtime;
  IF closes_at IS NOT NULL AND now_ts >= closes_at THEN
    FOR i IN 1 .. n LOOP
      created_ms := NULL;
      expires_ms := NULL;
      found_seats := 0;
      taken := '{}';
      held := 0;
      chosen := NULL;
      stranded := '{}';
      closed := true;
      RETURN NEXT;
    END LOOP;
    RETURN;
  END IF;
  closed := false;
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


-- Checkout's first phases (0013), leaving a closed showtime's checkout to the general path.
CREATE OR REPLACE FUNCTION boxoffice_checkout_begin(now_ms BIGINT, customer BIGINT, key_text TEXT,
                                         fingerprint_text TEXT, hold UUID, token UUID,
                                         lease_ms BIGINT, ttl_ms BIGINT, max_lifetime_ms BIGINT)
RETURNS TABLE (outcome TEXT, booking BIGINT, showtime BIGINT, booked_seats TEXT[],
               total BIGINT, total_currency TEXT, created_ms BIGINT, before_ms BIGINT,
               after_ms BIGINT)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  now_ts TIMESTAMPTZ := boxoffice_now(now_ms);
  h RECORD;
  ours INT;
  target TIMESTAMPTZ;
  changed INT;
  priced INT;
  currencies INT;
  sum_amount NUMERIC;
  one_currency TEXT;
BEGIN
  outcome := 'slow';
  INSERT INTO idempotency_key (customer_id, key, fingerprint, state, lock_token, locked_until,
                               created_at, updated_at)
  VALUES (customer, key_text, fingerprint_text, 'STARTED', token,
          now_ts + lease_ms * interval '1 ms', now_ts, now_ts)
  ON CONFLICT (customer_id, key) DO NOTHING;
  IF NOT FOUND THEN
    RETURN NEXT;  -- a key seen before: replayed, carried on or refused by the general path
    RETURN;
  END IF;
  SELECT sh.showtime_id, sh.seats, sh.status, sh.created_at, sh.expires_at INTO h
    FROM seat_hold sh WHERE sh.hold_id = hold AND sh.customer_id = customer FOR UPDATE;
  IF NOT FOUND OR h.status <> 'HELD' OR h.expires_at < now_ts
     OR EXISTS (SELECT 1 FROM booking b WHERE b.hold_id = hold AND b.status = 'PENDING')
     OR EXISTS (SELECT 1 FROM showtime st WHERE st.showtime_id = h.showtime_id
                   AND now_ts >= st.starts_at - st.sales_close_minutes * interval '1 minute') THEN
    DELETE FROM idempotency_key WHERE customer_id = customer AND key = key_text;
    RETURN NEXT;
    RETURN;
  END IF;
  SELECT count(*) FILTER (WHERE s.mine) INTO ours
    FROM (SELECT (ss.status = 'HELD' AND ss.hold_id = hold AND ss.hold_expires_at >= now_ts)
                   AS mine
            FROM show_seat ss WHERE ss.showtime_id = h.showtime_id AND ss.seat_code = ANY(h.seats)
           ORDER BY ss.seat_code FOR NO KEY UPDATE) s;
  SELECT count(*), count(DISTINCT p.currency), sum(p.amount), min(p.currency)
    INTO priced, currencies, sum_amount, one_currency
    FROM show_seat ss JOIN price p ON p.showtime_id = ss.showtime_id AND p.category = ss.category
   WHERE ss.showtime_id = h.showtime_id AND ss.seat_code = ANY(h.seats);
  IF ours <> cardinality(h.seats) OR priced <> cardinality(h.seats) OR currencies <> 1
     OR sum_amount > 9223372036854775807 THEN
    DELETE FROM idempotency_key WHERE customer_id = customer AND key = key_text;
    RETURN NEXT;
    RETURN;
  END IF;
  target := greatest(h.expires_at, least(now_ts + ttl_ms * interval '1 ms',
                                         h.created_at + max_lifetime_ms * interval '1 ms'));
  -- (Every seat was found this hold's and live under its lock above: the rows are named by
  -- key and hold only, so no plan can wander through other seats.)
  UPDATE show_seat ss SET hold_expires_at = target
   WHERE ss.showtime_id = h.showtime_id AND ss.seat_code = ANY(h.seats) AND ss.hold_id = hold;
  GET DIAGNOSTICS changed = ROW_COUNT;
  PERFORM boxoffice_assert(changed = cardinality(h.seats), 'partial re-arm');
  UPDATE seat_hold SET expires_at = target WHERE hold_id = hold;
  INSERT INTO booking (hold_id, showtime_id, customer_id, seats, status, amount, currency,
                       created_at, updated_at)
  VALUES (hold, h.showtime_id, customer, h.seats, 'PENDING', sum_amount::bigint, one_currency,
          now_ts, now_ts)
  RETURNING booking_id INTO booking;
  UPDATE idempotency_key
     SET state = 'BOOKING_CREATED', booking_id = booking, hold_expiry_before = h.expires_at,
         hold_expiry_after = target, updated_at = now_ts
   WHERE customer_id = customer AND key = key_text;
  outcome := 'booked';
  showtime := h.showtime_id;
  booked_seats := h.seats;
  total := sum_amount::bigint;
  total_currency := one_currency;
  created_ms := (extract(epoch FROM now_ts) * 1000)::bigint;
  before_ms := (extract(epoch FROM h.expires_at) * 1000)::bigint;
  after_ms := (extract(epoch FROM target) * 1000)::bigint;
  RETURN NEXT;
END
$$;
