-- Running a cinema (API.md "Running a cinema (admin)", docs/payments.md "Cancelling a
-- showtime"): a showtime's status, its refund terms, the reason of a refund, and the
-- append-only trail of every admin change.
--
-- * showtime.status: SCHEDULED or CANCELLED (with cancelled_at and the operator's reason).
--   A cancel is one short transaction on the showtime's shard: the row taken FOR NO KEY
--   UPDATE, marked CANCELLED, every CONFIRMED booking REFUNDED with its refund intent and
--   BookingRefunded event, every PENDING one left to its payment (refused and refunded
--   when it comes), every live hold ended and every seat freed.
-- * showtime.refund_until_minutes: customers may cancel until this many minutes before the
--   start (NULL: not at all).
-- * refund.reason: why the money goes back (NULL: money without a seat).
-- * admin_audit: who changed what, when, before and after; rows are only ever inserted.
--
-- The race that matters, a confirmation against a cancel, is decided on the showtime row:
-- boxoffice_settle_confirm_batch (below) and the general path take it FOR SHARE before
-- the bookings, so whichever commits second sees the other. Holds and checkouts of a
-- cancelled showtime are refused inside their decisions (boxoffice_hold_picks reads it
-- closed; boxoffice_checkout_begin leaves it to the general path, which refuses it).
ALTER TABLE showtime
    ADD COLUMN status VARCHAR(16) NOT NULL DEFAULT 'SCHEDULED'
        CHECK (status IN ('SCHEDULED', 'CANCELLED')),
    ADD COLUMN cancelled_at TIMESTAMPTZ,
    ADD COLUMN cancel_reason TEXT CHECK (length(cancel_reason) <= 500),
    ADD COLUMN refund_until_minutes INT CHECK (refund_until_minutes BETWEEN 0 AND 525600),
    ADD CONSTRAINT showtime_cancelled_when CHECK ((status = 'CANCELLED') = (cancelled_at IS NOT NULL));

ALTER TABLE refund ADD COLUMN reason VARCHAR(32)
    CHECK (reason IN ('SHOWTIME_CANCELLED', 'CUSTOMER_CANCELLED'));

-- A showtime's bookings by status: the cancel, the admin's bookings and sales.
CREATE INDEX idx_booking_showtime ON booking (showtime_id, status, booking_id);

CREATE TABLE admin_audit (
    audit_id    BIGINT      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    showtime_id BIGINT      NOT NULL REFERENCES showtime,
    actor       BIGINT      NOT NULL,
    action      VARCHAR(32) NOT NULL,
    before      JSONB,
    after       JSONB,
    at          TIMESTAMPTZ NOT NULL
);
CREATE INDEX idx_admin_audit_showtime ON admin_audit (showtime_id, audit_id);
CREATE FUNCTION boxoffice_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'admin_audit is append-only' USING ERRCODE = 'restrict_violation';
END
$$;
CREATE TRIGGER admin_audit_append_only BEFORE UPDATE OR DELETE ON admin_audit
    FOR EACH ROW EXECUTE FUNCTION boxoffice_append_only();

-- The functions below are those of 0025 (holds), 0028 (checkout's first phases) and 0018
-- (confirmation batches) with the showtime's status read where they decide.
-- The hold decision gains a column (`cancelled`), so it is replaced by DROP and CREATE in
-- this migration's one transaction. (The design note of 0024 holds; `closed` is true for
-- every request once sales have closed, `cancelled` too when the showtime was cancelled.)
DROP FUNCTION boxoffice_hold_picks(BIGINT, BIGINT, UUID[], BIGINT[], INT[], BIGINT[], BOOLEAN[],
                                   INT[], INT, TEXT[], INT[], INT[], INT[], INT[], INT[], INT[],
                                   INT[]);

CREATE FUNCTION boxoffice_hold_picks(now_ms BIGINT, showtime BIGINT, hold_ids UUID[],
                                     customers BIGINT[], seat_counts INT[], ttls_ms BIGINT[],
                                     best BOOLEAN[], first_pick INT[], max_seats INT,
                                     codes TEXT[], pick_seat INT[], pick_seats INT[],
                                     pick_guard INT[], pick_guards INT[], seat_at INT[],
                                     guard_at INT[], beyond_at INT[])
RETURNS TABLE (created_ms BIGINT, expires_ms BIGINT, found_seats INT, taken TEXT[], held BIGINT,
               chosen INT, stranded TEXT[], closed BOOLEAN, cancelled BOOLEAN)
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
  SELECT CASE WHEN st.status = 'CANCELLED' THEN '-infinity'::timestamptz
              ELSE st.starts_at - st.sales_close_minutes * interval '1 minute' END
    INTO closes_at
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
      cancelled := closes_at = '-infinity'::timestamptz;
      RETURN NEXT;
    END LOOP;
    RETURN;
  END IF;
  closed := false;
  cancelled := false;
  PERFORM pg_advisory_xact_lock(k)
     FROM (SELECT DISTINCT hashtextextended('hold:' || showtime || ':' || c, 0) AS k
             FROM unnest(customers) AS c) keys
    ORDER BY k;
  PERFORM 1 FROM show_seat s
    WHERE s.showtime_id = showtime AND s.seat_code = ANY(codes)
    ORDER BY s.seat_code FOR NO KEY UPDATE;
  -- A cancel locks every seat of its showtime: one that committed while this waited for
  -- the seats is seen now, and nothing is held on a cancelled showtime.
  IF EXISTS (SELECT 1 FROM showtime st WHERE st.showtime_id = showtime
               AND st.status = 'CANCELLED') THEN
    FOR i IN 1 .. n LOOP
      created_ms := NULL;
      expires_ms := NULL;
      found_seats := 0;
      taken := '{}';
      held := 0;
      chosen := NULL;
      stranded := '{}';
      closed := true;
      cancelled := true;
      RETURN NEXT;
    END LOOP;
    RETURN;
  END IF;
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
                   AND (st.status = 'CANCELLED'
                        OR now_ts >= st.starts_at - st.sales_close_minutes * interval '1 minute')) THEN
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
  target := boxoffice_rearm_hold(hold, h.showtime_id, h.seats, h.created_at, h.expires_at,
                                 now_ts, ttl_ms, max_lifetime_ms);
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

CREATE OR REPLACE FUNCTION boxoffice_settle_confirm_batch(now_ms BIGINT, payments TEXT[],
                                                          sessions TEXT[], refs BIGINT[],
                                                          paid BIGINT[], paid_currencies TEXT[],
                                                          events UUID[])
RETURNS TABLE (outcome TEXT, o_booking BIGINT, o_hold TEXT, o_showtime BIGINT,
               o_customer BIGINT, o_seats TEXT[], o_status TEXT, o_amount BIGINT,
               o_currency TEXT, o_session TEXT, o_url TEXT, o_session_expires_ms BIGINT,
               o_payment TEXT, o_created_ms BIGINT)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  now_ts TIMESTAMPTZ := boxoffice_now(now_ms);
  n INT := cardinality(payments);
  outcomes TEXT[] := array_fill('slow'::text, ARRAY[cardinality(payments)]);
  inserted BOOLEAN[] := array_fill(false, ARRAY[cardinality(payments)]);
  deferred BOOLEAN[] := array_fill(false, ARRAY[cardinality(payments)]);
  by_payment INT[];
  by_booking INT[];
  b RECORD;
  -- The bookings of the batch, by position k (booking-id order); a booking's seats are
  -- bk_seats[bk_from[k] .. bk_from[k] + bk_count[k] - 1].
  bk_ids BIGINT[] := '{}';
  bk_holds UUID[] := '{}';
  bk_showtimes BIGINT[] := '{}';
  bk_customers BIGINT[] := '{}';
  bk_status TEXT[] := '{}';
  bk_amounts BIGINT[] := '{}';
  bk_currencies TEXT[] := '{}';
  bk_sessions TEXT[] := '{}';
  bk_urls TEXT[] := '{}';
  bk_pay_expires TIMESTAMPTZ[] := '{}';
  bk_created TIMESTAMPTZ[] := '{}';
  bk_from INT[] := '{}';
  bk_count INT[] := '{}';
  bk_seats TEXT[] := '{}';
  existing TEXT[];
  recorded TEXT[] := '{}';     -- payment ids this batch sets out to record
  wanted INT[] := '{}';        -- their reports, in payment-id order
  got TEXT[];                  -- the ones the INSERT recorded
  deferred_ids TEXT[] := '{}';
  still TEXT[];
  hold_ids UUID[] := '{}';
  seat_showtimes BIGINT[] := '{}';  -- the recorded reports' seats: showtime and code
  seat_codes TEXT[] := '{}';
  s_keys TEXT[] := '{}';       -- those seats as 'showtime:code', in lock order
  s_owner UUID[] := '{}';      -- the hold that has each live, else NULL
  doomed TEXT[] := '{}';       -- recorded payment ids taken back
  c_reports INT[] := '{}';     -- the confirmed reports, in booking-id order
  c_k INT[] := '{}';           -- and their bookings' positions
  c_keys TEXT[] := '{}';       -- their seats as 'showtime:code'
  c_showtimes BIGINT[] := '{}';
  c_codes TEXT[] := '{}';
  c_seat_k INT[] := '{}';      -- each seat's booking position
  st BIGINT;
  i INT;
  k INT;
  q INT;
  ours INT;
  found_at INT[];
  changed INT;
  total INT;
  cancelled BIGINT[];
BEGIN
  PERFORM boxoffice_assert(n > 0 AND cardinality(sessions) = n AND cardinality(refs) = n
                           AND cardinality(paid) = n AND cardinality(paid_currencies) = n
                           AND cardinality(events) = n, 'confirm batch: arrays of one length');
  -- 0. Their showtimes, FOR SHARE in id order before anything else (the lock order of
  -- docs/payments.md: showtime → booking → seat_hold → show_seat): a cancel, which takes
  -- the showtime's row for update, commits before this reads it or waits until this
  -- commits. A booking of a cancelled showtime is left to the general path ('slow'),
  -- which refuses and refunds it.
  SELECT COALESCE(array_agg(s.showtime_id) FILTER (WHERE s.status = 'CANCELLED'), '{}')
    INTO cancelled
    FROM (SELECT st.showtime_id, st.status FROM showtime st
           WHERE st.showtime_id IN (SELECT bk.showtime_id FROM booking bk
                                     WHERE bk.booking_id = ANY(refs))
           ORDER BY st.showtime_id FOR SHARE) s;
  -- 1. The bookings, by id, locked and read.
  FOR b IN SELECT bk.* FROM booking bk WHERE bk.booking_id = ANY(refs)
            ORDER BY bk.booking_id FOR UPDATE LOOP
    bk_ids := bk_ids || b.booking_id;
    bk_holds := bk_holds || b.hold_id;
    bk_showtimes := bk_showtimes || b.showtime_id;
    bk_customers := bk_customers || b.customer_id;
    bk_status := bk_status || b.status::text;
    bk_amounts := bk_amounts || b.amount;
    bk_currencies := bk_currencies || b.currency::text;
    bk_sessions := bk_sessions || b.session_id;
    bk_urls := bk_urls || b.payment_url;
    bk_pay_expires := bk_pay_expires || b.payment_expires_at;
    bk_created := bk_created || b.created_at;
    bk_from := bk_from || (cardinality(bk_seats) + 1);
    bk_count := bk_count || cardinality(b.seats);
    bk_seats := bk_seats || b.seats;
  END LOOP;
  -- 2. The payments recorded already; both orders of the reports.
  SELECT COALESCE(array_agg(p.payment_id), '{}') INTO existing
    FROM payment p WHERE p.payment_id = ANY(payments);
  SELECT array_agg(r.i ORDER BY payments[r.i], r.i), array_agg(r.i ORDER BY refs[r.i], r.i)
    INTO by_payment, by_booking FROM generate_subscripts(refs, 1) AS r(i);
  -- 3. In payment-id order, the reports that may confirm.
  FOREACH i IN ARRAY by_payment LOOP
    k := array_position(bk_ids, refs[i]);
    CONTINUE WHEN k IS NULL;
    -- A payment this batch records may still be taken back below (a late one): a second
    -- copy of it is decided once the first is (never a duplicate of nothing).
    IF payments[i] = ANY(recorded) THEN
      deferred[i] := true;
      deferred_ids := deferred_ids || payments[i];
      CONTINUE;
    END IF;
    IF payments[i] = ANY(existing) THEN
      outcomes[i] := 'duplicate';  -- a callback delivered twice, the usual misfortune
      CONTINUE;
    END IF;
    CONTINUE WHEN bk_status[k] <> 'PENDING' OR bk_showtimes[k] = ANY(cancelled)
                  OR (bk_sessions[k] IS NOT NULL AND bk_sessions[k] IS DISTINCT FROM sessions[i])
                  OR bk_amounts[k] <> paid[i] OR bk_currencies[k] <> paid_currencies[i];
    recorded := recorded || payments[i];
    wanted := wanted || i;
  END LOOP;
  IF cardinality(wanted) > 0 THEN
    WITH ins AS (
      INSERT INTO payment (payment_id, session_id, booking_id, status, amount, currency,
                           received_at)
      SELECT payments[w.i], sessions[w.i], refs[w.i], 'SUCCEEDED', paid[w.i],
             paid_currencies[w.i], now_ts
        FROM unnest(wanted) WITH ORDINALITY AS w(i, o) ORDER BY w.o
      ON CONFLICT (payment_id) DO NOTHING
      RETURNING payment_id)
    SELECT COALESCE(array_agg(ins.payment_id), '{}') INTO got FROM ins;
    FOREACH i IN ARRAY wanted LOOP
      IF payments[i] = ANY(got) THEN
        inserted[i] := true;
        k := array_position(bk_ids, refs[i]);
        hold_ids := hold_ids || bk_holds[k];
        seat_showtimes := seat_showtimes || array_fill(bk_showtimes[k], ARRAY[bk_count[k]]);
        seat_codes := seat_codes || bk_seats[bk_from[k] : bk_from[k] + bk_count[k] - 1];
      ELSE
        outcomes[i] := 'duplicate';  -- recorded meanwhile by another transaction
      END IF;
    END LOOP;
  END IF;
  -- 4. The holds, by id; then their seats, showtime by showtime in seat-code order (each
  -- statement finds its rows by key, as the hold batch's lock does), with their live hold.
  IF cardinality(hold_ids) > 0 THEN
    PERFORM 1 FROM seat_hold sh WHERE sh.hold_id = ANY(hold_ids) ORDER BY sh.hold_id FOR UPDATE;
    FOR st IN SELECT DISTINCT u.s FROM unnest(seat_showtimes) AS u(s) ORDER BY u.s LOOP
      SELECT s_keys || COALESCE(array_agg(st || ':' || l.code ORDER BY l.code), '{}'),
             s_owner || COALESCE(array_agg(l.owner ORDER BY l.code), '{}')
        INTO s_keys, s_owner
        FROM (SELECT ss.seat_code::text AS code,
                     CASE WHEN ss.status = 'HELD' AND ss.hold_expires_at >= now_ts
                          THEN ss.hold_id END AS owner
                FROM show_seat ss
               WHERE ss.showtime_id = st
                 AND ss.seat_code = ANY(ARRAY(SELECT u.c
                                                FROM unnest(seat_showtimes, seat_codes) AS u(s, c)
                                               WHERE u.s = st))
               ORDER BY ss.seat_code FOR NO KEY UPDATE) l;
    END LOOP;
  END IF;
  -- 5. Each recorded report in booking-id order.
  FOREACH i IN ARRAY by_booking LOOP
    CONTINUE WHEN NOT inserted[i];
    k := array_position(bk_ids, refs[i]);
    -- (Seats counted once each, as rows are: a booking that named a seat twice never
    -- counts as owning all it names.)
    found_at := '{}';
    FOR j IN bk_from[k] .. bk_from[k] + bk_count[k] - 1 LOOP
      q := array_position(s_keys, bk_showtimes[k] || ':' || bk_seats[j]);
      IF q IS NOT NULL AND s_owner[q] = bk_holds[k] AND NOT q = ANY(found_at) THEN
        found_at := found_at || q;
      END IF;
    END LOOP;
    ours := cardinality(found_at);
    IF bk_status[k] <> 'PENDING' OR ours <> bk_count[k] THEN
      doomed := doomed || payments[i];  -- this transaction's own row
      CONTINUE;
    END IF;
    bk_status[k] := 'CONFIRMED';
    FOR j IN bk_from[k] .. bk_from[k] + bk_count[k] - 1 LOOP
      q := array_position(s_keys, bk_showtimes[k] || ':' || bk_seats[j]);
      s_owner[q] := NULL;  -- booked now
      c_keys := c_keys || s_keys[q];
      c_showtimes := c_showtimes || bk_showtimes[k];
      c_codes := c_codes || bk_seats[j];
      c_seat_k := c_seat_k || k;
    END LOOP;
    c_reports := c_reports || i;
    c_k := c_k || k;
    outcomes[i] := 'confirmed';
  END LOOP;
  IF cardinality(doomed) > 0 THEN
    DELETE FROM payment p WHERE p.payment_id = ANY(doomed);
  END IF;
  -- 6. What the confirmed reports write. (Every seat was found its hold's and live under
  -- its lock above.)
  IF cardinality(c_reports) > 0 THEN
    total := 0;
    FOR st IN SELECT DISTINCT u.s FROM unnest(c_showtimes) AS u(s) ORDER BY u.s LOOP
      UPDATE show_seat ss
         SET status = 'BOOKED',
             booking_id = bk_ids[c_seat_k[array_position(c_keys, st || ':' || ss.seat_code)]],
             hold_expires_at = NULL
       WHERE ss.showtime_id = st
         AND ss.seat_code = ANY(ARRAY(SELECT u.c FROM unnest(c_showtimes, c_codes) AS u(s, c)
                                       WHERE u.s = st))
         AND ss.hold_id = bk_holds[c_seat_k[array_position(c_keys, st || ':' || ss.seat_code)]];
      GET DIAGNOSTICS changed = ROW_COUNT;
      total := total + changed;
    END LOOP;
    PERFORM boxoffice_assert(total = cardinality(c_codes), 'partial confirm');
    UPDATE seat_hold SET status = 'BOOKED'
     WHERE hold_id = ANY(ARRAY(SELECT bk_holds[c.k] FROM unnest(c_k) AS c(k)));
    UPDATE booking bk
       SET status = 'CONFIRMED',
           payment_id = payments[c_reports[array_position(c_k,
                                          array_position(bk_ids, bk.booking_id))]],
           updated_at = now_ts
     WHERE bk.booking_id = ANY(ARRAY(SELECT bk_ids[c.k] FROM unnest(c_k) AS c(k)));
    GET DIAGNOSTICS changed = ROW_COUNT;
    PERFORM boxoffice_assert(changed = cardinality(c_k), 'confirm: a booking not updated');
    -- The event's bytes are BookingEventJson's (src/store/store.cc): keys in order, compact.
    INSERT INTO outbox (event_id, type, key, payload, created_at)
    SELECT events[c.i], 'BookingConfirmed', bk_ids[c.k]::text,
           '{"amount":{"amount":' || bk_amounts[c.k] || ',"currency":' || to_json(bk_currencies[c.k])
           || '},"bookingId":' || bk_ids[c.k] || ',"id":' || to_json(events[c.i]::text)
           || ',"occurredAt":'
           || to_json(to_char(now_ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
           || ',"seats":' || array_to_json(bk_seats[bk_from[c.k] : bk_from[c.k] + bk_count[c.k] - 1])
           || ',"showtimeId":' || bk_showtimes[c.k] || ',"type":"BookingConfirmed"}',
           now_ts
      FROM unnest(c_reports, c_k) WITH ORDINALITY AS c(i, k, o) ORDER BY c.o;
  END IF;
  -- A second copy of a payment this batch recorded: a duplicate if the first confirmed (its
  -- row stayed), else 'slow' like the first.
  IF cardinality(deferred_ids) > 0 THEN
    SELECT COALESCE(array_agg(p.payment_id), '{}') INTO still
      FROM payment p WHERE p.payment_id = ANY(deferred_ids);
    FOR i IN 1 .. n LOOP
      IF deferred[i] AND payments[i] = ANY(still) THEN
        outcomes[i] := 'duplicate';
      END IF;
    END LOOP;
  END IF;
  -- One row per report, in the order given; a confirmed one's booking as it now stands.
  FOR i IN 1 .. n LOOP
    outcome := outcomes[i];
    o_booking := NULL; o_hold := NULL; o_showtime := NULL; o_customer := NULL;
    o_seats := NULL; o_status := NULL; o_amount := NULL; o_currency := NULL;
    o_session := NULL; o_url := NULL; o_session_expires_ms := NULL; o_payment := NULL;
    o_created_ms := NULL;
    IF outcome = 'confirmed' THEN
      k := array_position(bk_ids, refs[i]);
      o_booking := bk_ids[k];
      o_hold := bk_holds[k]::text;
      o_showtime := bk_showtimes[k];
      o_customer := bk_customers[k];
      o_seats := bk_seats[bk_from[k] : bk_from[k] + bk_count[k] - 1];
      o_status := bk_status[k];
      o_amount := bk_amounts[k];
      o_currency := bk_currencies[k];
      o_session := bk_sessions[k];
      o_url := bk_urls[k];
      o_session_expires_ms := (extract(epoch FROM bk_pay_expires[k]) * 1000)::bigint;
      o_payment := payments[i];
      o_created_ms := (extract(epoch FROM bk_created[k]) * 1000)::bigint;
    END IF;
    RETURN NEXT;
  END LOOP;
END
$$;
