-- boxoffice_settle_confirm_batch (0016) decided in memory: the same arguments, results,
-- lock order and decisions, in about ten statements per batch (two more per showtime)
-- instead of five plus twelve per report. As with the hold batch (0017), PostgreSQL spent
-- most of a confirmation's time starting the executor for small per-report statements.
--
--  1. the bookings, locked in booking-id order and read once;
--  2. which payment ids are recorded already, once;
--  3. each report in payment-id order: the ones that may confirm are recorded by one
--     INSERT, in that order (the payment keys' lock order); a row the INSERT finds taken
--     makes its report a duplicate;
--  4. the holds of those reports, locked by id; then their seats, showtime by showtime in
--     seat-code order, locked and read with the hold that has them live;
--  5. each recorded report in booking-id order, on those arrays: confirmed if its booking
--     is still PENDING and every seat still its hold's and live (a booking confirmed by an
--     earlier report of the batch is no longer PENDING, its seats no longer held), else
--     its payment row goes again and it is 'slow';
--  6. one statement each for what the confirmed reports write: the seats (per showtime,
--     their changed-row count asserted), the holds, the bookings, the outbox events.
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
BEGIN
  PERFORM boxoffice_assert(n > 0 AND cardinality(sessions) = n AND cardinality(refs) = n
                           AND cardinality(paid) = n AND cardinality(paid_currencies) = n
                           AND cardinality(events) = n, 'confirm batch: arrays of one length');
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
    CONTINUE WHEN bk_status[k] <> 'PENDING'
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
