-- Tickets and the door (docs/tickets.md; migrations/postgres/0029_tickets.sql says why).
ALTER TABLE booking ADD COLUMN email TEXT CHECK (email IS NULL OR length(email) <= 254);

CREATE TABLE checkin (
    booking_id    INTEGER NOT NULL REFERENCES booking,
    seat_code     TEXT    NOT NULL,
    showtime_id   INTEGER NOT NULL,
    checked_in_at INTEGER NOT NULL,
    nonce         TEXT    CHECK (nonce IS NULL OR length(nonce) BETWEEN 1 AND 100),
    PRIMARY KEY (booking_id, seat_code)
) WITHOUT ROWID;
CREATE INDEX idx_checkin_showtime ON checkin (showtime_id);
