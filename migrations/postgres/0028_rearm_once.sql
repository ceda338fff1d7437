-- The re-arm formula written once. A hold's expiry moves to now + ttl, never past
-- created_at + max_lifetime and never earlier than it already is (API.md, "Extend a hold";
-- at checkout the same, so a payment page has the whole ttl). Extending a hold
-- (boxoffice_extend_hold, 0015) and beginning checkout (boxoffice_checkout_begin, 0025)
-- each carried their own copy of it and of the two writes that follow; both now call
-- boxoffice_rearm_hold. Its C++ twin, for SQLite and the general path, is Rearm in
-- src/store/money.cc; the hold rule table (tests/store/hold_rules_table_test.cc) and the
-- store contract pin both.
--
-- The caller holds the hold's row (FOR UPDATE) and has found every seat of it this hold's
-- and live under FOR NO KEY UPDATE, in seat order: the rows below are named by key and
-- hold only, so no plan can wander through other seats, and every one of them changes.
CREATE FUNCTION boxoffice_rearm_hold(hold UUID, showtime BIGINT, hold_seats TEXT[],
                                     hold_created TIMESTAMPTZ, hold_expires TIMESTAMPTZ,
                                     now_ts TIMESTAMPTZ, ttl_ms BIGINT, max_lifetime_ms BIGINT)
RETURNS TIMESTAMPTZ
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  target TIMESTAMPTZ := greatest(hold_expires, least(now_ts + ttl_ms * interval '1 ms',
                                                  hold_created + max_lifetime_ms * interval '1 ms'));
  changed INT;
BEGIN
  UPDATE show_seat ss SET hold_expires_at = target
   WHERE ss.showtime_id = showtime AND ss.seat_code = ANY(hold_seats) AND ss.hold_id = hold;
  GET DIAGNOSTICS changed = ROW_COUNT;
  PERFORM boxoffice_assert(changed = cardinality(hold_seats), 'partial re-arm');
  UPDATE seat_hold sh SET expires_at = target WHERE sh.hold_id = hold;
  RETURN target;
END
$$;

-- Extending a hold (0015), its re-arm through the helper.
CREATE OR REPLACE FUNCTION boxoffice_extend_hold(now_ms BIGINT, hold UUID, customer BIGINT, ttl_ms BIGINT,
                                      max_lifetime_ms BIGINT)
RETURNS TABLE (outcome TEXT, hold_text TEXT, showtime BIGINT, owner BIGINT,
               held_seats TEXT[], state TEXT, created_ms BIGINT, expires_ms BIGINT,
               expired BOOLEAN)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  now_ts TIMESTAMPTZ := boxoffice_now(now_ms);
  h RECORD;
  ours INT;
  target TIMESTAMPTZ;
BEGIN
  SELECT sh.showtime_id, sh.seats, sh.status, sh.created_at, sh.expires_at INTO h
    FROM seat_hold sh WHERE sh.hold_id = hold AND sh.customer_id = customer FOR UPDATE;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  outcome := 'not_active';
  hold_text := hold::text;
  showtime := h.showtime_id;
  owner := customer;
  held_seats := h.seats;
  state := h.status;
  created_ms := (extract(epoch FROM h.created_at) * 1000)::bigint;
  expires_ms := (extract(epoch FROM h.expires_at) * 1000)::bigint;
  expired := h.expires_at < now_ts;
  IF h.status <> 'HELD' OR h.expires_at < now_ts THEN
    RETURN NEXT;
    RETURN;
  END IF;
  SELECT count(*) FILTER (WHERE s.mine) INTO ours
    FROM (SELECT (ss.status = 'HELD' AND ss.hold_id = hold AND ss.hold_expires_at >= now_ts)
                   AS mine
            FROM show_seat ss WHERE ss.showtime_id = h.showtime_id AND ss.seat_code = ANY(h.seats)
           ORDER BY ss.seat_code FOR NO KEY UPDATE) s;
  IF ours <> cardinality(h.seats) THEN
    RETURN NEXT;
    RETURN;
  END IF;
  target := boxoffice_rearm_hold(hold, h.showtime_id, h.seats, h.created_at, h.expires_at,
                                 now_ts, ttl_ms, max_lifetime_ms);
  outcome := 'extended';
  expires_ms := (extract(epoch FROM target) * 1000)::bigint;
  RETURN NEXT;
END
$$;

-- Checkout's first phases (0025), its re-arm through the helper.
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
