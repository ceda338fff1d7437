-- A purchase's phases, each one statement (one round trip, one transaction): checkout's key
-- claim with its booking and the hold's re-arm; the gateway session's attachment with the
-- stored response; the confirmation with its payment row and outbox event.
--
-- The first and the last decide only the case a purchase meets when all goes well (a new
-- key, an active hold with no checkout pending; a successful payment of the right amount,
-- for a PENDING booking of its session whose seats are all still its hold's). Anything
-- else changes nothing and answers 'slow': the caller then runs the general transaction
-- (store/money.cc), which decides every case, on both stores. The fast path makes exactly
-- the decision the general one would make for that case, so which one ran never shows.
--
-- Lock order, as in store/money.cc: the key row, then the hold row, then the seat rows in
-- seat-code order (checkout); the booking row, then the payment's unique key, then the
-- hold row, then the seat rows (confirmation). A row a function inserted and then finds it
-- must not keep (the key of a refused checkout, the payment of a late one) it deletes
-- again in the same transaction: nothing of it is ever seen.

-- The time every function here judges by: now_ms, or the database's clock, to the ms (the
-- general path reads its clock the same way, once per transaction).
CREATE FUNCTION boxoffice_now(now_ms BIGINT) RETURNS TIMESTAMPTZ
LANGUAGE sql STABLE AS $$
  SELECT to_timestamp(round(extract(epoch FROM
           COALESCE(to_timestamp(now_ms / 1000.0), statement_timestamp())) * 1000) / 1000.0)
$$;

-- Checkout's claim and booking (Store::ClaimCheckoutKey then StartCheckout) for a new key.
-- outcome 'booked': the key is recorded in phase BOOKING_CREATED with token, its booking
-- is PENDING for the sum of the seats' prices, and the hold is re-armed to now + ttl
-- within created_at + max_lifetime (never earlier than it ends). 'slow': nothing changed.
CREATE FUNCTION boxoffice_checkout_begin(now_ms BIGINT, customer BIGINT, key_text TEXT,
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
     OR EXISTS (SELECT 1 FROM booking b WHERE b.hold_id = hold AND b.status = 'PENDING') THEN
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

-- Checkout's last phase (Store::FinishCheckout), every case: 'finished' (the session is
-- attached and the response stored), 'abandoned' (the booking is no longer PENDING: the
-- key is dropped), 'lost' (the claim is no longer token's: nothing changed).
CREATE FUNCTION boxoffice_checkout_finish(now_ms BIGINT, customer BIGINT, key_text TEXT,
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
   WHERE booking_id = k.booking_id AND status = 'PENDING'
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

-- A successful payment confirming its booking (Store::SettlePayment's kConfirmed): the
-- seats HELD → BOOKED, the hold BOOKED, the booking CONFIRMED with the payment, the payment
-- row and the BookingConfirmed event, in one transaction. 'duplicate': the payment id was
-- recorded before (nothing changed). 'slow': any other case (nothing changed). A
-- confirmation's row carries the booking as it now is, in the columns of a booking read.
CREATE FUNCTION boxoffice_settle_confirm(now_ms BIGINT, payment TEXT, session TEXT,
                                         reference BIGINT, paid BIGINT, paid_currency TEXT,
                                         event UUID)
RETURNS TABLE (outcome TEXT, o_booking BIGINT, o_hold TEXT, o_showtime BIGINT,
               o_customer BIGINT, o_seats TEXT[], o_status TEXT, o_amount BIGINT,
               o_currency TEXT, o_session TEXT, o_url TEXT, o_session_expires_ms BIGINT,
               o_payment TEXT, o_created_ms BIGINT)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  now_ts TIMESTAMPTZ := boxoffice_now(now_ms);
  b RECORD;
  ours INT;
  changed INT;
BEGIN
  outcome := 'slow';
  SELECT bk.* INTO b FROM booking bk WHERE bk.booking_id = reference FOR UPDATE;
  IF NOT FOUND THEN
    RETURN NEXT;
    RETURN;
  END IF;
  IF EXISTS (SELECT 1 FROM payment p WHERE p.payment_id = payment) THEN
    outcome := 'duplicate';  -- a callback delivered twice, the usual misfortune
    RETURN NEXT;
    RETURN;
  END IF;
  IF b.status <> 'PENDING' OR (b.session_id IS NOT NULL AND b.session_id <> session)
     OR b.amount <> paid OR b.currency <> paid_currency THEN
    RETURN NEXT;
    RETURN;
  END IF;
  -- The payment's key next, as the general path takes it (booking, payment, hold, seats);
  -- taken back below if the seats are no longer all the hold's.
  INSERT INTO payment (payment_id, session_id, booking_id, status, amount, currency, received_at)
  VALUES (payment, session, b.booking_id, 'SUCCEEDED', paid, paid_currency, now_ts)
  ON CONFLICT (payment_id) DO NOTHING;
  IF NOT FOUND THEN
    outcome := 'duplicate';
    RETURN NEXT;
    RETURN;
  END IF;
  PERFORM 1 FROM seat_hold sh WHERE sh.hold_id = b.hold_id FOR UPDATE;
  SELECT count(*) FILTER (WHERE s.mine) INTO ours
    FROM (SELECT (ss.status = 'HELD' AND ss.hold_id = b.hold_id AND ss.hold_expires_at >= now_ts)
                   AS mine
            FROM show_seat ss WHERE ss.showtime_id = b.showtime_id AND ss.seat_code = ANY(b.seats)
           ORDER BY ss.seat_code FOR NO KEY UPDATE) s;
  IF ours <> cardinality(b.seats) THEN
    DELETE FROM payment p WHERE p.payment_id = payment;  -- this transaction's own row
    RETURN NEXT;
    RETURN;
  END IF;
  -- (Every seat was found this hold's and live under its lock above.)
  UPDATE show_seat ss SET status = 'BOOKED', booking_id = b.booking_id, hold_expires_at = NULL
   WHERE ss.showtime_id = b.showtime_id AND ss.seat_code = ANY(b.seats) AND ss.hold_id = b.hold_id;
  GET DIAGNOSTICS changed = ROW_COUNT;
  PERFORM boxoffice_assert(changed = cardinality(b.seats), 'partial confirm');
  UPDATE seat_hold SET status = 'BOOKED' WHERE hold_id = b.hold_id;
  UPDATE booking SET status = 'CONFIRMED', payment_id = payment, updated_at = now_ts
   WHERE booking_id = b.booking_id;
  -- The event's bytes are BookingEventJson's (src/store/store.cc): keys in order, compact.
  INSERT INTO outbox (event_id, type, key, payload, created_at)
  VALUES (event, 'BookingConfirmed', b.booking_id::text,
          '{"amount":{"amount":' || b.amount || ',"currency":' || to_json(b.currency::text)
          || '},"bookingId":' || b.booking_id || ',"id":' || to_json(event::text)
          || ',"occurredAt":'
          || to_json(to_char(now_ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
          || ',"seats":' || array_to_json(b.seats) || ',"showtimeId":' || b.showtime_id
          || ',"type":"BookingConfirmed"}',
          now_ts);
  outcome := 'confirmed';
  o_booking := b.booking_id;
  o_hold := b.hold_id::text;
  o_showtime := b.showtime_id;
  o_customer := b.customer_id;
  o_seats := b.seats;
  o_status := 'CONFIRMED';
  o_amount := b.amount;
  o_currency := b.currency;
  o_session := b.session_id;
  o_url := b.payment_url;
  o_session_expires_ms := (extract(epoch FROM b.payment_expires_at) * 1000)::bigint;
  o_payment := payment;
  o_created_ms := (extract(epoch FROM b.created_at) * 1000)::bigint;
  RETURN NEXT;
END
$$;
