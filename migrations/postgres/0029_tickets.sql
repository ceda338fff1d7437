-- Tickets and the door (docs/tickets.md, API.md "Tickets and the door").
--
-- Where a booking's tickets are e-mailed: given at checkout, stored by its last phase.
ALTER TABLE booking ADD COLUMN email TEXT CHECK (email IS NULL OR length(email) <= 254);

-- A check-in: the first scan that admitted a seat of a booking. The primary key makes the
-- insert conditional: of any number of doors scanning one ticket at once, one inserts and
-- the others read its row. It lives with the booking (on its showtime's shard).
CREATE TABLE checkin (
    booking_id    BIGINT      NOT NULL REFERENCES booking,
    seat_code     VARCHAR(8)  NOT NULL,
    showtime_id   BIGINT      NOT NULL,
    checked_in_at TIMESTAMPTZ NOT NULL,
    nonce         TEXT        CHECK (nonce IS NULL OR length(nonce) BETWEEN 1 AND 100),
    PRIMARY KEY (booking_id, seat_code)
);
CREATE INDEX idx_checkin_showtime ON checkin (showtime_id);

-- A scan (Store::CheckIn) in one statement: 'unknown' (no such booking of this showtime,
-- or the seat is not the booking's), 'void' (the booking is not CONFIRMED), 'admitted'
-- (this scan inserted the check-in, or carries the nonce of the scan that did) or
-- 'already' (an earlier scan did), with the admitting scan's time.
--
-- The booking's row is read FOR SHARE: a refund (UPDATE of its status) waits for the
-- check-in to commit, and a check-in waits for a refund being written, so no ticket is
-- admitted by a booking that a committed refund already ended. Lock order: booking, then
-- the check-in row (nothing locks them the other way round).
CREATE FUNCTION boxoffice_checkin(now_ms BIGINT, showtime BIGINT, booking BIGINT, seat TEXT,
                                  scan_nonce TEXT)
RETURNS TABLE (outcome TEXT, at_ms BIGINT)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  b RECORD;
  c RECORD;
BEGIN
  SELECT bk.status, bk.showtime_id, bk.seats INTO b
    FROM booking bk WHERE bk.booking_id = booking FOR SHARE;
  IF NOT FOUND OR b.showtime_id <> showtime OR NOT (seat = ANY (b.seats)) THEN
    outcome := 'unknown';
    RETURN NEXT;
    RETURN;
  END IF;
  IF b.status <> 'CONFIRMED' THEN
    outcome := 'void';
    RETURN NEXT;
    RETURN;
  END IF;
  INSERT INTO checkin AS ci (booking_id, seat_code, showtime_id, checked_in_at, nonce)
  VALUES (booking, seat, showtime, boxoffice_now(now_ms), scan_nonce)
  ON CONFLICT (booking_id, seat_code) DO NOTHING
  RETURNING ci.checked_in_at INTO c;
  IF FOUND THEN
    outcome := 'admitted';
    at_ms := (extract(epoch FROM c.checked_in_at) * 1000)::bigint;
    RETURN NEXT;
    RETURN;
  END IF;
  -- Another scan inserted it (its transaction committed before ours went on: READ
  -- COMMITTED, and each statement here sees what committed before it began).
  SELECT ci.checked_in_at, ci.nonce INTO c
    FROM checkin ci WHERE ci.booking_id = booking AND ci.seat_code = seat;
  outcome := CASE WHEN scan_nonce IS NOT NULL AND c.nonce = scan_nonce
                  THEN 'admitted' ELSE 'already' END;
  at_ms := (extract(epoch FROM c.checked_in_at) * 1000)::bigint;
  RETURN NEXT;
END
$$;

-- Checkout's last phase (boxoffice_checkout_finish of 0013) that also stores where the
-- tickets go. The nine-argument form stays for instances of the previous release during a
-- rolling upgrade (docs/operations.md "Upgrading").
CREATE FUNCTION boxoffice_checkout_finish(now_ms BIGINT, customer BIGINT, key_text TEXT,
                                          token UUID, session TEXT, url TEXT,
                                          session_expires_ms BIGINT, response_status INT,
                                          response_body TEXT, contact TEXT)
RETURNS TEXT
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  outcome TEXT;
BEGIN
  outcome := boxoffice_checkout_finish(now_ms, customer, key_text, token, session, url,
                                       session_expires_ms, response_status, response_body);
  IF outcome = 'finished' AND contact IS NOT NULL THEN
    UPDATE booking SET email = contact
     WHERE booking_id = (SELECT ik.booking_id FROM idempotency_key ik
                          WHERE ik.customer_id = customer AND ik.key = key_text);
  END IF;
  RETURN outcome;
END
$$;
