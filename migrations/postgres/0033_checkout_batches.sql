-- Checkout's phases batched: the new-key checkouts (boxoffice_checkout_begin, 0031) and the
-- last phases (boxoffice_checkout_finish, 0029) that arrive together on an I/O loop are
-- decided by one statement each (PgBatcher, src/store/pg_checkout_batch.h), as the holds
-- (0031) and the confirmations (0031) already are: the rows read and locked once per
-- table, the decisions made in memory in arrival order, one write per table.
--
-- Each request is decided exactly as the one-request functions decide it, one after the
-- other in the order given: a batch changes how many statements run, never what they
-- decide. What those functions leave to the general path ('slow') these leave to it too,
-- having changed nothing for that request; and one case more: a key the batch names twice
-- (after its first request, below).
--
-- Lock order, the one of every path that meets these rows (docs/payments.md): the keys in
-- (customer, key) order, then the holds in hold-id order, then the seats in (showtime,
-- seat code) order; the last phase takes the keys in that order, then the bookings in
-- booking-id order. A showtime's row is read, never locked, by the first phases (as by
-- the one-request function): a cancel takes the showtime, the bookings, the holds and the
-- seats in that order, so a checkout that waits for a hold or a seat the cancel has sees
-- the seats freed and leaves the request to the general path, which refuses it.
--
-- The one-request functions stay for instances of the previous release during a rolling
-- upgrade (docs/operations.md "Upgrading").

-- outcome 'booked' (with the booking and the hold's expiry before and after its re-arm)
-- or 'slow', one row per request in the order given.
CREATE FUNCTION boxoffice_checkout_begin_batch(now_ms BIGINT, customers BIGINT[],
                                               key_texts TEXT[], fingerprints TEXT[],
                                               holds UUID[], tokens UUID[], leases_ms BIGINT[],
                                               ttls_ms BIGINT[], max_lifetimes_ms BIGINT[])
RETURNS TABLE (o_outcome TEXT, o_booking BIGINT, o_showtime BIGINT, o_seats TEXT[],
               o_total BIGINT, o_currency TEXT, o_created_ms BIGINT, o_before_ms BIGINT,
               o_after_ms BIGINT)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  now_ts TIMESTAMPTZ := boxoffice_now(now_ms);
  n INT := cardinality(customers);
  -- Per request i: whether it is still on its way to 'booked', and what it found.
  going BOOLEAN[] := array_fill(false, ARRAY[cardinality(customers)]);
  claimed BOOLEAN[] := array_fill(false, ARRAY[cardinality(customers)]);
  r_showtime BIGINT[] := array_fill(NULL::bigint, ARRAY[cardinality(customers)]);
  r_from INT[] := array_fill(NULL::int, ARRAY[cardinality(customers)]);
  r_count INT[] := array_fill(NULL::int, ARRAY[cardinality(customers)]);
  r_created TIMESTAMPTZ[] := array_fill(NULL::timestamptz, ARRAY[cardinality(customers)]);
  r_before TIMESTAMPTZ[] := array_fill(NULL::timestamptz, ARRAY[cardinality(customers)]);
  r_after TIMESTAMPTZ[] := array_fill(NULL::timestamptz, ARRAY[cardinality(customers)]);
  r_amount BIGINT[] := array_fill(NULL::bigint, ARRAY[cardinality(customers)]);
  r_currency TEXT[] := array_fill(NULL::text, ARRAY[cardinality(customers)]);
  all_seats TEXT[] := '{}';    -- request i's seats: all_seats[r_from[i] .. + r_count[i] - 1]
  firsts INT[];                -- the first request naming each key
  claimed_requests INT[];      -- those whose key this batch recorded
  wanted_holds UUID[] := '{}';  -- the claimed requests' holds and customers
  wanted_customers BIGINT[] := '{}';
  h RECORD;
  p RECORD;
  i INT;
  j INT;
  pending_holds UUID[];
  refused_showtimes BIGINT[];
  seat_req INT[] := '{}';      -- the seats of the requests going on, in lock order
  seat_showtimes BIGINT[] := '{}';
  seat_codes TEXT[] := '{}';
  seat_targets TIMESTAMPTZ[] := '{}';
  seat_holds UUID[] := '{}';
  went INT[] := '{}';          -- the requests booked, in order
  went_bookings BIGINT[];      -- and their bookings
  changed INT;
BEGIN
  PERFORM boxoffice_assert(n > 0 AND cardinality(key_texts) = n
                           AND cardinality(fingerprints) = n AND cardinality(holds) = n
                           AND cardinality(tokens) = n AND cardinality(leases_ms) = n
                           AND cardinality(ttls_ms) = n AND cardinality(max_lifetimes_ms) = n,
                           'checkout begin batch: arrays of one length');
  -- 1. The keys, inserted in (customer, key) order. A key the batch names twice is the
  -- first request's to claim; the later ones go the general way, having changed nothing,
  -- even when the first is refused (one after the other, the second would claim the key
  -- again: a key sent for two holds at once is the client's mistake, which the general
  -- way answers). A key recorded before: the general way replays it.
  SELECT array_agg(f.i) INTO firsts
    FROM (SELECT DISTINCT ON (customers[r.i], key_texts[r.i]) r.i
            FROM generate_subscripts(customers, 1) AS r(i)
           ORDER BY customers[r.i], key_texts[r.i], r.i) AS f;
  WITH ins AS (
    INSERT INTO idempotency_key (customer_id, key, fingerprint, state, lock_token,
                                 locked_until, created_at, updated_at)
    SELECT customers[f.i], key_texts[f.i], fingerprints[f.i], 'STARTED', tokens[f.i],
           now_ts + leases_ms[f.i] * interval '1 ms', now_ts, now_ts
      FROM unnest(firsts) AS f(i) ORDER BY customers[f.i], key_texts[f.i]
    ON CONFLICT (customer_id, key) DO NOTHING
    RETURNING customer_id, key
  )
  SELECT COALESCE(array_agg(f.i), '{}') INTO claimed_requests
    FROM unnest(firsts) AS f(i)
    JOIN ins ON ins.customer_id = customers[f.i] AND ins.key = key_texts[f.i];
  FOREACH i IN ARRAY claimed_requests LOOP
    claimed[i] := true;
    wanted_holds := wanted_holds || holds[i];
    wanted_customers := wanted_customers || customers[i];
  END LOOP;
  -- 2. The holds of the requests' customers, locked in hold-id order (another customer's
  -- hold is not the request's: it goes the general way, as alone). A hold its customer
  -- names twice is the first request's; the later ones find a checkout pending on it and
  -- go the general way.
  FOR h IN SELECT sh.hold_id, sh.customer_id, sh.showtime_id, sh.seats, sh.status,
                  sh.created_at, sh.expires_at
             FROM seat_hold sh
            WHERE sh.hold_id = ANY(wanted_holds) AND sh.customer_id = ANY(wanted_customers)
            ORDER BY sh.hold_id FOR UPDATE LOOP
    i := (SELECT min(r.i) FROM generate_subscripts(customers, 1) AS r(i)
           WHERE claimed[r.i] AND holds[r.i] = h.hold_id AND customers[r.i] = h.customer_id);
    CONTINUE WHEN i IS NULL OR h.status <> 'HELD' OR h.expires_at < now_ts
                  OR cardinality(h.seats) = 0
                  OR cardinality(h.seats) <> (SELECT count(DISTINCT c) FROM unnest(h.seats) AS c);
    going[i] := true;
    r_showtime[i] := h.showtime_id;
    r_from[i] := cardinality(all_seats) + 1;
    r_count[i] := cardinality(h.seats);
    all_seats := all_seats || h.seats;
    r_created[i] := h.created_at;
    r_before[i] := h.expires_at;
  END LOOP;
  -- A checkout already pending on the hold, or a showtime cancelled or closed to sales.
  SELECT COALESCE(array_agg(bk.hold_id), '{}') INTO pending_holds
    FROM booking bk
   WHERE bk.hold_id = ANY(ARRAY(SELECT holds[r.i] FROM generate_subscripts(customers, 1) AS r(i)
                                 WHERE going[r.i]))
     AND bk.status = 'PENDING';
  SELECT COALESCE(array_agg(st.showtime_id), '{}') INTO refused_showtimes
    FROM showtime st
   WHERE st.showtime_id = ANY(ARRAY(SELECT r_showtime[r.i]
                                      FROM generate_subscripts(customers, 1) AS r(i)
                                     WHERE going[r.i]))
     AND (st.status = 'CANCELLED'
          OR now_ts >= st.starts_at - st.sales_close_minutes * interval '1 minute');
  FOR i IN 1 .. n LOOP
    IF going[i] AND (holds[i] = ANY(pending_holds) OR r_showtime[i] = ANY(refused_showtimes)) THEN
      going[i] := false;
    END IF;
  END LOOP;
  -- 3. The seats of the requests going on, locked in (showtime, seat code) order; each
  -- request's own still live and its, and every one priced in one currency.
  SELECT COALESCE(array_agg(s.i ORDER BY s.st, s.code), '{}'),
         COALESCE(array_agg(s.st ORDER BY s.st, s.code), '{}'),
         COALESCE(array_agg(s.code ORDER BY s.st, s.code), '{}')
    INTO seat_req, seat_showtimes, seat_codes
    FROM (SELECT r.i, r_showtime[r.i] AS st, c.code
            FROM generate_subscripts(customers, 1) AS r(i),
                 unnest(all_seats[r_from[r.i] : r_from[r.i] + r_count[r.i] - 1]) AS c(code)
           WHERE going[r.i]) s;
  PERFORM 1 FROM show_seat ss
    JOIN unnest(seat_showtimes, seat_codes) AS u(st, code)
      ON ss.showtime_id = u.st AND ss.seat_code = u.code
   ORDER BY ss.showtime_id, ss.seat_code FOR NO KEY UPDATE OF ss;
  FOR p IN SELECT u.i,
                  count(*) FILTER (WHERE ss.status = 'HELD' AND ss.hold_id = holds[u.i]
                                     AND ss.hold_expires_at >= now_ts) AS ours,
                  count(pr.amount) AS priced, count(DISTINCT pr.currency) AS currencies,
                  sum(pr.amount) AS amount, min(pr.currency) AS currency
             FROM unnest(seat_req, seat_showtimes, seat_codes) AS u(i, st, code)
             JOIN show_seat ss ON ss.showtime_id = u.st AND ss.seat_code = u.code
             LEFT JOIN price pr ON pr.showtime_id = ss.showtime_id AND pr.category = ss.category
            GROUP BY u.i LOOP
    IF p.ours = r_count[p.i] AND p.priced = r_count[p.i] AND p.currencies = 1
       AND p.amount <= 9223372036854775807 THEN
      r_amount[p.i] := p.amount::bigint;
      r_currency[p.i] := p.currency;
    END IF;
  END LOOP;
  FOR i IN 1 .. n LOOP
    IF going[i] AND r_amount[i] IS NULL THEN
      going[i] := false;  -- a seat no longer the hold's, or not priced in one currency
    END IF;
    IF going[i] THEN
      -- boxoffice_rearm_hold's formula (0028; Rearm in src/store/money.cc).
      r_after[i] := greatest(r_before[i],
                             least(now_ts + ttls_ms[i] * interval '1 ms',
                                   r_created[i] + max_lifetimes_ms[i] * interval '1 ms'));
      went := went || i;
    END IF;
  END LOOP;
  -- 4. The writes, one per table: the re-armed seats and holds, the bookings, the keys at
  -- their second recovery point; the keys of the requests not booked dropped again.
  IF cardinality(went) > 0 THEN
    SELECT array_agg(s.st ORDER BY s.o), array_agg(s.code ORDER BY s.o),
           array_agg(holds[s.i] ORDER BY s.o), array_agg(r_after[s.i] ORDER BY s.o)
      INTO seat_showtimes, seat_codes, seat_holds, seat_targets
      FROM unnest(seat_req, seat_showtimes, seat_codes) WITH ORDINALITY AS s(i, st, code, o)
     WHERE going[s.i];
    UPDATE show_seat ss SET hold_expires_at = u.target
      FROM unnest(seat_showtimes, seat_codes, seat_holds, seat_targets)
           AS u(st, code, hold, target)
     WHERE ss.showtime_id = u.st AND ss.seat_code = u.code AND ss.hold_id = u.hold;
    GET DIAGNOSTICS changed = ROW_COUNT;
    PERFORM boxoffice_assert(changed = cardinality(seat_targets), 'checkout batch: partial re-arm');
    UPDATE seat_hold sh SET expires_at = r_after[w.i]
      FROM unnest(went) AS w(i)
     WHERE sh.hold_id = holds[w.i];
    GET DIAGNOSTICS changed = ROW_COUNT;
    PERFORM boxoffice_assert(changed = cardinality(went), 'checkout batch: a hold not re-armed');
    WITH ins AS (
      INSERT INTO booking (hold_id, showtime_id, customer_id, seats, status, amount, currency,
                           created_at, updated_at)
      SELECT holds[w.i], r_showtime[w.i], customers[w.i],
             all_seats[r_from[w.i] : r_from[w.i] + r_count[w.i] - 1], 'PENDING', r_amount[w.i],
             r_currency[w.i], now_ts, now_ts
        FROM unnest(went) WITH ORDINALITY AS w(i, o) ORDER BY w.o
      RETURNING booking_id, hold_id
    )
    SELECT array_agg(ins.booking_id ORDER BY w.o) INTO went_bookings
      FROM unnest(went) WITH ORDINALITY AS w(i, o) JOIN ins ON ins.hold_id = holds[w.i];
    PERFORM boxoffice_assert(COALESCE(cardinality(went_bookings), 0) = cardinality(went),
                             'checkout batch: a booking not inserted');
    UPDATE idempotency_key ik
       SET state = 'BOOKING_CREATED', booking_id = went_bookings[w.o], hold_expiry_before = r_before[w.i],
           hold_expiry_after = r_after[w.i], updated_at = now_ts
      FROM unnest(went) WITH ORDINALITY AS w(i, o)
     WHERE ik.customer_id = customers[w.i] AND ik.key = key_texts[w.i];
    GET DIAGNOSTICS changed = ROW_COUNT;
    PERFORM boxoffice_assert(changed = cardinality(went), 'checkout batch: a key not updated');
  END IF;
  DELETE FROM idempotency_key ik
   USING generate_subscripts(customers, 1) AS r(i)
   WHERE claimed[r.i] AND NOT going[r.i]
     AND ik.customer_id = customers[r.i] AND ik.key = key_texts[r.i];
  -- One row per request, in the order given.
  FOR i IN 1 .. n LOOP
    o_outcome := 'slow';
    o_booking := NULL; o_showtime := NULL; o_seats := NULL; o_total := NULL;
    o_currency := NULL; o_created_ms := NULL; o_before_ms := NULL; o_after_ms := NULL;
    IF going[i] THEN
      j := array_position(went, i);
      o_outcome := 'booked';
      o_booking := went_bookings[j];
      o_showtime := r_showtime[i];
      o_seats := all_seats[r_from[i] : r_from[i] + r_count[i] - 1];
      o_total := r_amount[i];
      o_currency := r_currency[i];
      o_created_ms := (extract(epoch FROM now_ts) * 1000)::bigint;
      o_before_ms := (extract(epoch FROM r_before[i]) * 1000)::bigint;
      o_after_ms := (extract(epoch FROM r_after[i]) * 1000)::bigint;
    END IF;
    RETURN NEXT;
  END LOOP;
END
$$;

-- outcome 'finished', 'abandoned' (the booking is no longer PENDING: its key dropped) or
-- 'lost' (the claim is not the request's), one row per request in the order given.
CREATE FUNCTION boxoffice_checkout_finish_batch(now_ms BIGINT, customers BIGINT[],
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
  -- gets the gateway's, and where its tickets go.
  PERFORM 1 FROM booking bk
    WHERE bk.booking_id = ANY(ARRAY(SELECT r_booking[c.i] FROM unnest(candidates) AS c(i)))
    ORDER BY bk.booking_id FOR UPDATE;
  WITH upd AS (
    UPDATE booking bk
       SET session_id = sessions[c.i], payment_url = urls[c.i],
           payment_expires_at = to_timestamp(sessions_expire_ms[c.i] / 1000.0),
           email = COALESCE(NULLIF(contacts[c.i], ''), bk.email), updated_at = statement_timestamp()
      FROM unnest(candidates) AS c(i)
     WHERE bk.booking_id = r_booking[c.i] AND bk.status = 'PENDING'
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
