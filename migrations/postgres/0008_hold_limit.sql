-- API.md's HOLD_LIMIT: one customer holds at most 8 seats of a showtime across all their
-- live holds. Two holds of the same customer on different seats lock no row in common, so
-- the count must be serialised per (showtime, customer): this function takes a
-- transaction-level advisory lock on that pair first, then counts. Being VOLATILE, its
-- count runs on a fresh snapshot taken after the lock was granted, so it sees a hold that
-- a concurrent transaction of the same customer committed while this one waited. The
-- lock is released at commit; holds of other customers never wait for it.
CREATE FUNCTION boxoffice_customer_held(showtime BIGINT, customer BIGINT, now TIMESTAMPTZ)
RETURNS BIGINT
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('hold:' || showtime || ':' || customer, 0));
  RETURN (SELECT COALESCE(sum(cardinality(seats)), 0) FROM seat_hold
           WHERE customer_id = customer AND showtime_id = showtime
             AND status = 'HELD' AND expires_at >= now);
END
$$;
