-- The functions' statements are planned once per connection, not once per call.
--
-- PL/pgSQL keeps a plan per statement and connection, but a statement that reads its
-- function's variables is, by default (plan_cache_mode = auto), planned afresh with their
-- values for its first five runs and then for every run whose generic plan the planner
-- costs higher than the custom ones it made: with arrays as parameters (`= ANY(hold_ids)`,
-- `unnest(...)`) it usually does, so most statements of the batch functions were planned on
-- every call. At a light premiere load (10 customers a second, pg_stat_statements with
-- track=all and track_planning) that planning was 297 ms of the 1,165 ms the service's
-- statements took; planned generically, 19 ms, and the service's statements took 794 ms.
--
-- A plan made once is kept until the table's statistics change, and at a premiere they lag
-- by minutes: the planner saw a handful of PENDING bookings and HELD seats when it planned,
-- while a chain's premiere has tens of thousands of each. So no statement of a purchase may
-- have a plan whose cost grows with them, and before this migration six did (found by
-- tests/store/generic_plans_test.cc on a schema the size of a chain, with plans made as the
-- service makes them). Three read a job's partial index (the sweeper's HELD seats by
-- expiry, the reconciler's PENDING bookings by age, the cancelled showtimes) whole,
-- filtered by key, in statements that name a seat, a booking or a showtime, because its
-- predicate (`status = 'HELD'`) is implied by their own `status = 'HELD'`. They are made
-- again below with a predicate that only their jobs' statements state, word for word
-- (`(CASE WHEN status = 'HELD' THEN true END)`: true for the same rows, but the planner
-- proves an index's predicate from a statement only through an equal clause or operator
-- clauses, never through a CASE), so no other statement can use them. The test checks
-- every statement of a purchase finds its rows through a key index.
--
-- The setting holds during the call, and so for the helpers a function calls
-- (boxoffice_rearm_hold) and the foreign keys' checks.
--
-- A later migration that replaces one of these functions with CREATE OR REPLACE drops its
-- SET clause with the rest of the old definition: it must give the function
-- `SET plan_cache_mode = force_generic_plan` again (the store contract checks every
-- function of ours has it, boxoffice_assert and trigger functions aside, which run no
-- statement).

-- On a large table, build each new index CONCURRENTLY by hand before upgrading (and check it
-- is valid); instances older than this migration run their sweeper and reconciler without
-- these indexes meanwhile. The old indexes are dropped at the end, so that the exclusive
-- lock a drop takes is held for as short a time as this transaction allows.
CREATE INDEX IF NOT EXISTS idx_show_seat_sweep ON show_seat (hold_expires_at)
    WHERE (CASE WHEN status = 'HELD' THEN true END);
CREATE INDEX IF NOT EXISTS idx_booking_reconcile ON booking (created_at)
    WHERE (CASE WHEN status = 'PENDING' THEN true END);
CREATE INDEX IF NOT EXISTS idx_showtime_cancelled_at ON showtime (cancelled_at)
    WHERE (CASE WHEN status = 'CANCELLED' THEN true END);
-- A CASE has no statistics of its own: without these the planner takes half of each table
-- to match its index's predicate (as it would any expression it knows nothing of), and a
-- job's plan would be made for that; with them, ANALYZE counts how many do.
CREATE STATISTICS IF NOT EXISTS show_seat_sweep_stats
    ON ((CASE WHEN status = 'HELD' THEN true END)) FROM show_seat;
CREATE STATISTICS IF NOT EXISTS booking_reconcile_stats
    ON ((CASE WHEN status = 'PENDING' THEN true END)) FROM booking;
CREATE STATISTICS IF NOT EXISTS showtime_cancelled_stats
    ON ((CASE WHEN status = 'CANCELLED' THEN true END)) FROM showtime;

-- Three statements of a purchase were planned through more than their keys, and are written
-- again here (the rest of each function is as it was):
--  * the confirmation batch's lock of its showtimes (0031) read them by a join that a plan
--    may run as a merge over every showtime up to the batch's own; they are now named by
--    id (`showtime_id = ANY(ARRAY(...))`), a lookup per showtime;
--  * checkout's last phase, batched (0033) and alone (0013), wrote its booking where
--    `booking_id = … AND status = 'PENDING'`, which lets a plan read the unique index of
--    pending checkouts whole (its predicate is that status); the status is now stated as
--    `status IS NOT DISTINCT FROM 'PENDING'`, the same test on a NOT NULL column, from
--    which PostgreSQL proves no index predicate, so the booking is found by its id.
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
           WHERE st.showtime_id = ANY(ARRAY(SELECT bk.showtime_id FROM booking bk
                                              WHERE bk.booking_id = ANY(refs)))
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


CREATE OR REPLACE FUNCTION boxoffice_checkout_finish_batch(now_ms BIGINT, customers BIGINT[],
                                                key_texts TEXT[], tokens UUID[],
                                                sessions TEXT[], urls TEXT[],
                                                sessions_expire_ms BIGINT[],
                                                response_statuses INT[],
                                                response_bodies TEXT[], contacts TEXT[])
RETURNS TABLE (o_outcome TEXT)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  now_ts TIMESTAMPTZ := boxoffice_now(now_ms);
  n INT := cardinality(customers);
  outcomes TEXT[] := array_fill('lost'::text, ARRAY[cardinality(customers)]);
  r_booking BIGINT[] := array_fill(NULL::bigint, ARRAY[cardinality(customers)]);
  candidates INT[] := '{}';
  done INT[] := '{}';
  k RECORD;
  i INT;
  changed INT;
BEGIN
  PERFORM boxoffice_assert(n > 0 AND cardinality(key_texts) = n AND cardinality(tokens) = n
                           AND cardinality(sessions) = n AND cardinality(urls) = n
                           AND cardinality(sessions_expire_ms) = n
                           AND cardinality(response_statuses) = n
                           AND cardinality(response_bodies) = n AND cardinality(contacts) = n,
                           'checkout finish batch: arrays of one length');
  -- 1. The keys, locked in (customer, key) order. Of the requests naming one key, the first
  -- that holds its claim decides it; one after the other, the others would find the claim
  -- not theirs, or the key finished or dropped: 'lost'.
  FOR k IN SELECT ik.customer_id, ik.key, ik.state, ik.lock_token, ik.booking_id
             FROM idempotency_key ik
            WHERE (ik.customer_id, ik.key) IN (SELECT u.c, u.k FROM unnest(customers, key_texts)
                                                                   AS u(c, k))
            ORDER BY ik.customer_id, ik.key FOR UPDATE LOOP
    CONTINUE WHEN k.state <> 'BOOKING_CREATED' OR k.lock_token IS NULL;
    i := (SELECT min(r.i) FROM generate_subscripts(customers, 1) AS r(i)
           WHERE customers[r.i] = k.customer_id AND key_texts[r.i] = k.key
             AND tokens[r.i] = k.lock_token);
    CONTINUE WHEN i IS NULL;
    r_booking[i] := k.booking_id;
    candidates := candidates || i;
  END LOOP;
  PERFORM boxoffice_assert(
      (SELECT count(DISTINCT r_booking[c.i]) = count(r_booking[c.i])
         FROM unnest(candidates) AS c(i)), 'checkout finish batch: two keys of one booking');
  -- 2. Their bookings, locked in booking-id order; a PENDING one without another session
  -- gets the gateway's, and where its tickets go. (`IS NOT DISTINCT FROM`: no partial index
  -- of PENDING bookings can serve it, so each is found by its id; docs/store.md.)
  PERFORM 1 FROM booking bk
    WHERE bk.booking_id = ANY(ARRAY(SELECT r_booking[c.i] FROM unnest(candidates) AS c(i)))
    ORDER BY bk.booking_id FOR UPDATE;
  WITH upd AS (
    UPDATE booking bk
       SET session_id = sessions[c.i], payment_url = urls[c.i],
           payment_expires_at = to_timestamp(sessions_expire_ms[c.i] / 1000.0),
           email = COALESCE(NULLIF(contacts[c.i], ''), bk.email), updated_at = statement_timestamp()
      FROM unnest(candidates) AS c(i)
     WHERE bk.booking_id = r_booking[c.i] AND bk.status IS NOT DISTINCT FROM 'PENDING'
       AND (bk.session_id IS NULL OR bk.session_id = sessions[c.i])
    RETURNING c.i
  )
  SELECT COALESCE(array_agg(upd.i), '{}') INTO done FROM upd;
  FOREACH i IN ARRAY candidates LOOP
    outcomes[i] := CASE WHEN i = ANY(done) THEN 'finished' ELSE 'abandoned' END;
  END LOOP;
  -- 3. The keys: finished with the response to replay, or dropped.
  UPDATE idempotency_key ik
     SET state = 'FINISHED', lock_token = NULL, locked_until = NULL,
         response_status = response_statuses[d.i], response_body = response_bodies[d.i],
         updated_at = now_ts
    FROM unnest(done) AS d(i)
   WHERE ik.customer_id = customers[d.i] AND ik.key = key_texts[d.i];
  GET DIAGNOSTICS changed = ROW_COUNT;
  PERFORM boxoffice_assert(changed = cardinality(done), 'checkout finish batch: a key not finished');
  DELETE FROM idempotency_key ik
   USING unnest(candidates) AS c(i)
   WHERE outcomes[c.i] = 'abandoned'
     AND ik.customer_id = customers[c.i] AND ik.key = key_texts[c.i];
  FOR i IN 1 .. n LOOP
    o_outcome := outcomes[i];
    RETURN NEXT;
  END LOOP;
END
$$;


CREATE OR REPLACE FUNCTION boxoffice_checkout_finish(now_ms BIGINT, customer BIGINT, key_text TEXT,
                                          token UUID, session TEXT, url TEXT,
                                          session_expires_ms BIGINT, response_status INT,
                                          response_body TEXT)
RETURNS TEXT
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  now_ts TIMESTAMPTZ := boxoffice_now(now_ms);
  k RECORD;
BEGIN
  SELECT ik.state, ik.lock_token, ik.booking_id INTO k
    FROM idempotency_key ik WHERE ik.customer_id = customer AND ik.key = key_text FOR UPDATE;
  IF NOT FOUND OR k.lock_token IS DISTINCT FROM token OR k.state <> 'BOOKING_CREATED' THEN
    RETURN 'lost';
  END IF;
  UPDATE booking
     SET session_id = session, payment_url = url,
         payment_expires_at = to_timestamp(session_expires_ms / 1000.0),
         updated_at = statement_timestamp()
   WHERE booking_id = k.booking_id AND status IS NOT DISTINCT FROM 'PENDING'
     AND (session_id IS NULL OR session_id = session);
  IF NOT FOUND THEN
    DELETE FROM idempotency_key WHERE customer_id = customer AND key = key_text;
    RETURN 'abandoned';
  END IF;
  UPDATE idempotency_key
     SET state = 'FINISHED', lock_token = NULL, locked_until = NULL,
         response_status = boxoffice_checkout_finish.response_status,
         response_body = boxoffice_checkout_finish.response_body, updated_at = now_ts
   WHERE customer_id = customer AND key = key_text;
  RETURN 'finished';
END
$$;

DO $$
DECLARE
  f REGPROCEDURE;
BEGIN
  FOR f IN SELECT p.oid::regprocedure
             FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
            WHERE p.pronamespace = to_regnamespace(current_schema())
              AND p.proname LIKE 'boxoffice\_%'
              AND l.lanname = 'plpgsql'
              AND p.prorettype <> 'trigger'::regtype
              AND p.proname <> 'boxoffice_assert'
            ORDER BY p.oid LOOP
    EXECUTE format('ALTER FUNCTION %s SET plan_cache_mode = force_generic_plan', f);
  END LOOP;
END
$$;

DROP INDEX IF EXISTS idx_show_seat_held_expiry;
DROP INDEX IF EXISTS idx_booking_pending_age;
DROP INDEX IF EXISTS idx_showtime_cancelled;
