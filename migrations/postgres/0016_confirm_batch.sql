-- Confirmations decided together: the callbacks a loop receives while one confirmation
-- statement is in flight go as one call of boxoffice_settle_confirm_batch, which decides
-- each as boxoffice_settle_confirm (migration 0013) did, in one transaction, and answers
-- one row per report in the order given. boxoffice_settle_confirm becomes its batch of one:
-- one rule.
--
-- Lock order across the batch is the general path's (store/money.cc), level by level: the
-- booking rows (by booking id), then each report's payment key (by payment id), then the
-- hold rows (by hold id), then all their seat rows in (showtime, seat code) order. A
-- hold batch takes seat rows only, in seat-code order; a single confirmation one booking,
-- payment and hold, then its seats in order: no two of them can wait on each other in a
-- cycle.
--
-- Per report, as before: 'confirmed' (the booking's row follows), 'duplicate' (the payment
-- id was recorded already, or earlier in the same batch), or 'slow' (anything else: this
-- report changed nothing, its own payment row is deleted again, and the caller runs the
-- general transaction, which decides every case). Two payments for the same booking in one
-- batch: the first that can confirm it does; the others see its effects and go the general
-- way (a wrong one first in arrival order is then refunded as "not pending" rather than
-- "mismatch": another serial order, each payment confirmed or refunded exactly once). A payment id twice in one
-- batch: the second copy is decided after the first, a duplicate if the first confirmed,
-- else 'slow' (the first's row was taken back: never a duplicate of nothing).
CREATE FUNCTION boxoffice_settle_confirm_batch(now_ms BIGINT, payments TEXT[], sessions TEXT[],
                                               refs BIGINT[], paid BIGINT[],
                                               paid_currencies TEXT[], events UUID[])
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
  recorded TEXT[] := ARRAY[]::text[];  -- the payment ids this batch inserted
  deferred BOOLEAN[] := array_fill(false, ARRAY[cardinality(payments)]);
  hold_ids UUID[] := ARRAY[]::uuid[];        -- of the reports that inserted their payment
  seat_showtimes BIGINT[] := ARRAY[]::bigint[];  -- their seats: showtime and code, pairwise
  seat_codes TEXT[] := ARRAY[]::text[];
  st BIGINT;
  i INT;
  b RECORD;
  ours INT;
  changed INT;
BEGIN
  PERFORM boxoffice_assert(n > 0 AND cardinality(sessions) = n AND cardinality(refs) = n
                           AND cardinality(paid) = n AND cardinality(paid_currencies) = n
                           AND cardinality(events) = n, 'confirm batch: arrays of one length');
  -- The bookings, by id.
  PERFORM 1 FROM booking bk WHERE bk.booking_id = ANY(refs) ORDER BY bk.booking_id FOR UPDATE;
  -- Each report's payment key, in payment-id order, for the reports that may confirm.
  FOR i IN SELECT r.i FROM generate_subscripts(refs, 1) AS r(i) ORDER BY payments[r.i], r.i LOOP
    -- (Locked again, a no-op for the rows above: a booking committed since that statement
    -- is never read without its lock.)
    SELECT bk.* INTO b FROM booking bk WHERE bk.booking_id = refs[i] FOR UPDATE;
    CONTINUE WHEN NOT FOUND;
    -- A payment this batch recorded may still be taken back below (a late one): a second
    -- copy of it is decided once the first is (never a duplicate of nothing).
    IF payments[i] = ANY(recorded) THEN
      deferred[i] := true;
      CONTINUE;
    END IF;
    IF EXISTS (SELECT 1 FROM payment p WHERE p.payment_id = payments[i]) THEN
      outcomes[i] := 'duplicate';  -- a callback delivered twice, the usual misfortune
      CONTINUE;
    END IF;
    CONTINUE WHEN b.status <> 'PENDING' OR (b.session_id IS NOT NULL AND b.session_id <> sessions[i])
                  OR b.amount <> paid[i] OR b.currency <> paid_currencies[i];
    INSERT INTO payment (payment_id, session_id, booking_id, status, amount, currency,
                         received_at)
    VALUES (payments[i], sessions[i], b.booking_id, 'SUCCEEDED', paid[i], paid_currencies[i],
            now_ts)
    ON CONFLICT (payment_id) DO NOTHING;
    IF NOT FOUND THEN
      outcomes[i] := 'duplicate';
      CONTINUE;
    END IF;
    inserted[i] := true;
    recorded := recorded || payments[i];
    hold_ids := hold_ids || b.hold_id;
    seat_showtimes := seat_showtimes || array_fill(b.showtime_id, ARRAY[cardinality(b.seats)]);
    seat_codes := seat_codes || b.seats;
  END LOOP;
  -- The holds, by id; then their seats, showtime by showtime in seat-code order (each
  -- statement finds its rows by key, as the hold batch's lock does).
  PERFORM 1 FROM seat_hold sh WHERE sh.hold_id = ANY(hold_ids) ORDER BY sh.hold_id FOR UPDATE;
  FOR st IN SELECT DISTINCT u.s FROM unnest(seat_showtimes) AS u(s) ORDER BY u.s LOOP
    PERFORM 1 FROM show_seat ss
      WHERE ss.showtime_id = st
        AND ss.seat_code = ANY(ARRAY(SELECT u.c FROM unnest(seat_showtimes, seat_codes) AS u(s, c)
                                      WHERE u.s = st))
      ORDER BY ss.seat_code FOR NO KEY UPDATE;
  END LOOP;
  -- Each report that inserted its payment, in booking-id order: confirmed if every seat is
  -- still its hold's and live, else its payment row goes again and it is 'slow'.
  FOR i IN SELECT r.i FROM generate_subscripts(refs, 1) AS r(i) ORDER BY refs[r.i], r.i LOOP
    CONTINUE WHEN NOT inserted[i];
    SELECT bk.* INTO b FROM booking bk WHERE bk.booking_id = refs[i];
    -- (Counted over the seats named by key: a filter on status and expiry in the WHERE
    -- clause could lead the planner to the sweeper's partial index, migration 0014.)
    SELECT count(*) FILTER (WHERE ss.status = 'HELD' AND ss.hold_id = b.hold_id
                                  AND ss.hold_expires_at >= now_ts) INTO ours
      FROM show_seat ss WHERE ss.showtime_id = b.showtime_id AND ss.seat_code = ANY(b.seats);
    IF b.status <> 'PENDING' OR ours <> cardinality(b.seats) THEN
      DELETE FROM payment p WHERE p.payment_id = payments[i];  -- this transaction's own row
      CONTINUE;
    END IF;
    -- (Every seat was found this hold's and live under its lock above.)
    UPDATE show_seat ss SET status = 'BOOKED', booking_id = b.booking_id, hold_expires_at = NULL
     WHERE ss.showtime_id = b.showtime_id AND ss.seat_code = ANY(b.seats)
       AND ss.hold_id = b.hold_id;
    GET DIAGNOSTICS changed = ROW_COUNT;
    PERFORM boxoffice_assert(changed = cardinality(b.seats), 'partial confirm');
    UPDATE seat_hold SET status = 'BOOKED' WHERE hold_id = b.hold_id;
    UPDATE booking SET status = 'CONFIRMED', payment_id = payments[i], updated_at = now_ts
     WHERE booking_id = b.booking_id;
    -- The event's bytes are BookingEventJson's (src/store/store.cc): keys in order, compact.
    INSERT INTO outbox (event_id, type, key, payload, created_at)
    VALUES (events[i], 'BookingConfirmed', b.booking_id::text,
            '{"amount":{"amount":' || b.amount || ',"currency":' || to_json(b.currency::text)
            || '},"bookingId":' || b.booking_id || ',"id":' || to_json(events[i]::text)
            || ',"occurredAt":'
            || to_json(to_char(now_ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
            || ',"seats":' || array_to_json(b.seats) || ',"showtimeId":' || b.showtime_id
            || ',"type":"BookingConfirmed"}',
            now_ts);
    outcomes[i] := 'confirmed';
  END LOOP;
  -- A second copy of a payment this batch recorded: a duplicate if the first confirmed (its
  -- row stayed), else 'slow' like the first.
  FOR i IN 1 .. n LOOP
    IF deferred[i] AND EXISTS (SELECT 1 FROM payment p WHERE p.payment_id = payments[i]) THEN
      outcomes[i] := 'duplicate';
    END IF;
  END LOOP;
  -- One row per report, in the order given; a confirmed one's booking as it now stands.
  FOR i IN 1 .. n LOOP
    outcome := outcomes[i];
    o_booking := NULL; o_hold := NULL; o_showtime := NULL; o_customer := NULL;
    o_seats := NULL; o_status := NULL; o_amount := NULL; o_currency := NULL;
    o_session := NULL; o_url := NULL; o_session_expires_ms := NULL; o_payment := NULL;
    o_created_ms := NULL;
    IF outcome = 'confirmed' THEN
      SELECT bk.* INTO b FROM booking bk WHERE bk.booking_id = refs[i];
      o_booking := b.booking_id;
      o_hold := b.hold_id::text;
      o_showtime := b.showtime_id;
      o_customer := b.customer_id;
      o_seats := b.seats;
      o_status := b.status;
      o_amount := b.amount;
      o_currency := b.currency;
      o_session := b.session_id;
      o_url := b.payment_url;
      o_session_expires_ms := (extract(epoch FROM b.payment_expires_at) * 1000)::bigint;
      o_payment := b.payment_id;
      o_created_ms := (extract(epoch FROM b.created_at) * 1000)::bigint;
    END IF;
    RETURN NEXT;
  END LOOP;
END
$$;

CREATE OR REPLACE FUNCTION boxoffice_settle_confirm(now_ms BIGINT, payment TEXT, session TEXT,
                                                    reference BIGINT, paid BIGINT,
                                                    paid_currency TEXT, event UUID)
RETURNS TABLE (outcome TEXT, o_booking BIGINT, o_hold TEXT, o_showtime BIGINT,
               o_customer BIGINT, o_seats TEXT[], o_status TEXT, o_amount BIGINT,
               o_currency TEXT, o_session TEXT, o_url TEXT, o_session_expires_ms BIGINT,
               o_payment TEXT, o_created_ms BIGINT)
LANGUAGE sql VOLATILE AS $$
  SELECT * FROM boxoffice_settle_confirm_batch(now_ms, ARRAY[payment], ARRAY[session],
                                               ARRAY[reference], ARRAY[paid],
                                               ARRAY[paid_currency], ARRAY[event])
$$;
