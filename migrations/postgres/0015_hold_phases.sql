-- A hold's release and its extension, each one statement (one round trip, one
-- transaction), so that the routes run on the I/O loops' pipelines as holds do. Both
-- answer the hold's row as the hold's read (BOX_HOLD_COLUMNS in store/pg_sql.h) shows it
-- before the change, with its state as the general path derives it; no row when the hold
-- is not the customer's. Lock order, as everywhere: the hold row, then the seat rows in
-- seat-code order.

-- Store::ReleaseHold. A hold whose row is HELD (live or past its expiry) gives back the
-- seats it still owns and becomes RELEASED; a RELEASED or BOOKED one changes nothing (the
-- caller answers a BOOKED one with kNotActive).
CREATE FUNCTION boxoffice_release_hold(now_ms BIGINT, hold UUID, customer BIGINT)
RETURNS TABLE (hold_text TEXT, showtime BIGINT, owner BIGINT, held_seats TEXT[], state TEXT,
               created_ms BIGINT, expires_ms BIGINT, expired BOOLEAN)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  now_ts TIMESTAMPTZ := boxoffice_now(now_ms);
  h RECORD;
BEGIN
  SELECT sh.showtime_id, sh.seats, sh.status, sh.created_at, sh.expires_at INTO h
    FROM seat_hold sh WHERE sh.hold_id = hold AND sh.customer_id = customer FOR UPDATE;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  IF h.status = 'HELD' THEN
    -- Only rows this hold id still owns change: a newer hold on the same seats is untouched.
    PERFORM 1 FROM show_seat ss
      WHERE ss.showtime_id = h.showtime_id AND ss.seat_code = ANY(h.seats)
      ORDER BY ss.seat_code FOR NO KEY UPDATE;
    UPDATE show_seat ss
       SET status = 'AVAILABLE', hold_id = NULL, customer_id = NULL, hold_expires_at = NULL
     WHERE ss.showtime_id = h.showtime_id AND ss.seat_code = ANY(h.seats)
       AND ss.hold_id = hold AND ss.status = 'HELD';
    UPDATE seat_hold SET status = 'RELEASED' WHERE hold_id = hold AND status = 'HELD';
  END IF;
  hold_text := hold::text;
  showtime := h.showtime_id;
  owner := customer;
  held_seats := h.seats;
  state := h.status;
  created_ms := (extract(epoch FROM h.created_at) * 1000)::bigint;
  expires_ms := (extract(epoch FROM h.expires_at) * 1000)::bigint;
  expired := h.expires_at < now_ts;
  RETURN NEXT;
END
$$;

-- Store::ExtendHold. outcome 'extended': the live hold and every seat it owns now end at
-- now + ttl, within created_at + max_lifetime and never earlier than they did; expires_ms
-- is the new end. 'not_active': the hold is not live, or lost a seat; nothing changed.
CREATE FUNCTION boxoffice_extend_hold(now_ms BIGINT, hold UUID, customer BIGINT, ttl_ms BIGINT,
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
  changed INT;
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
  target := greatest(h.expires_at, least(now_ts + ttl_ms * interval '1 ms',
                                         h.created_at + max_lifetime_ms * interval '1 ms'));
  UPDATE show_seat ss SET hold_expires_at = target
   WHERE ss.showtime_id = h.showtime_id AND ss.seat_code = ANY(h.seats) AND ss.hold_id = hold;
  GET DIAGNOSTICS changed = ROW_COUNT;
  PERFORM boxoffice_assert(changed = cardinality(h.seats), 'partial re-arm');
  UPDATE seat_hold SET expires_at = target WHERE hold_id = hold;
  outcome := 'extended';
  expires_ms := (extract(epoch FROM target) * 1000)::bigint;
  RETURN NEXT;
END
$$;
