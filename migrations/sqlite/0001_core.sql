-- Showtimes, their prices and seats, and seat holds (times are Unix epoch milliseconds).
-- show_seat is the seeds' table: one row per seat of a showtime; the seat's state and the
-- hold that owns it change together in one conditional UPDATE.
CREATE TABLE showtime (
    showtime_id INTEGER PRIMARY KEY,
    title       TEXT    NOT NULL,
    cinema      TEXT    NOT NULL,
    hall        TEXT    NOT NULL,
    starts_at   INTEGER NOT NULL,
    seat_count  INTEGER NOT NULL CHECK (seat_count > 0)
);
CREATE INDEX idx_showtime_starts ON showtime (starts_at, showtime_id);
CREATE INDEX idx_showtime_cinema ON showtime (cinema, starts_at, showtime_id);

CREATE TABLE price (
    showtime_id INTEGER NOT NULL REFERENCES showtime ON DELETE CASCADE,
    category    TEXT    NOT NULL,
    amount      INTEGER NOT NULL CHECK (amount >= 0),
    currency    TEXT    NOT NULL,
    PRIMARY KEY (showtime_id, category)
);

CREATE TABLE show_seat (
    showtime_id     INTEGER NOT NULL REFERENCES showtime ON DELETE CASCADE,
    seat_code       TEXT    NOT NULL,
    status          TEXT    NOT NULL DEFAULT 'AVAILABLE'
                    CHECK (status IN ('AVAILABLE', 'HELD', 'BOOKED')),
    hold_id         TEXT,
    customer_id     INTEGER,
    hold_expires_at INTEGER,
    booking_id      INTEGER,
    row_label       TEXT    NOT NULL,
    seat_number     INTEGER NOT NULL,
    seat_order      INTEGER NOT NULL,
    category        TEXT    NOT NULL,
    PRIMARY KEY (showtime_id, seat_code),
    CHECK ((status = 'AVAILABLE') = (hold_id IS NULL))
) WITHOUT ROWID;
CREATE INDEX idx_show_seat_hold ON show_seat (hold_id);
CREATE INDEX idx_show_seat_expired ON show_seat (status, hold_expires_at);

-- One row per hold; seats is the comma-separated sorted list of codes.
CREATE TABLE seat_hold (
    hold_id     TEXT    PRIMARY KEY,
    showtime_id INTEGER NOT NULL REFERENCES showtime ON DELETE CASCADE,
    customer_id INTEGER NOT NULL,
    seats       TEXT    NOT NULL,
    status      TEXT    NOT NULL CHECK (status IN ('HELD', 'RELEASED', 'BOOKED')),
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX idx_seat_hold_customer ON seat_hold (customer_id, showtime_id);
