-- The money half: bookings, payments, refunds, the outbox, and idempotency keys
-- (times are Unix epoch milliseconds; seats are comma-separated sorted codes).
CREATE TABLE booking (
    booking_id         INTEGER PRIMARY KEY,
    hold_id            TEXT    NOT NULL REFERENCES seat_hold,
    showtime_id        INTEGER NOT NULL,
    customer_id        INTEGER NOT NULL,
    seats              TEXT    NOT NULL,
    status             TEXT    NOT NULL
                       CHECK (status IN ('PENDING', 'CONFIRMED', 'FAILED', 'REFUNDED')),
    amount             INTEGER NOT NULL CHECK (amount >= 0),
    currency           TEXT    NOT NULL,
    session_id         TEXT,
    payment_url        TEXT,
    payment_expires_at INTEGER,
    payment_id         TEXT,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL
);
CREATE UNIQUE INDEX idx_booking_pending_hold ON booking (hold_id) WHERE status = 'PENDING';
CREATE INDEX idx_booking_pending_age ON booking (created_at) WHERE status = 'PENDING';
CREATE INDEX idx_booking_customer ON booking (customer_id);

CREATE TABLE payment (
    payment_id  TEXT    PRIMARY KEY,
    session_id  TEXT,
    booking_id  INTEGER REFERENCES booking,
    status      TEXT    NOT NULL CHECK (status IN ('SUCCEEDED', 'FAILED')),
    amount      INTEGER NOT NULL,
    currency    TEXT    NOT NULL,
    received_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE refund (
    refund_id         TEXT    PRIMARY KEY,
    payment_id        TEXT    NOT NULL UNIQUE REFERENCES payment,
    booking_id        INTEGER REFERENCES booking,
    amount            INTEGER NOT NULL,
    currency          TEXT    NOT NULL,
    status            TEXT    NOT NULL CHECK (status IN ('PENDING', 'ISSUED')),
    gateway_refund_id TEXT,
    created_at        INTEGER NOT NULL,
    issued_at         INTEGER
) WITHOUT ROWID;
CREATE INDEX idx_refund_pending ON refund (created_at) WHERE status = 'PENDING';

CREATE TABLE outbox (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id     TEXT    NOT NULL UNIQUE,
    type         TEXT    NOT NULL,
    key          TEXT    NOT NULL,
    payload      TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    published_at INTEGER
);
CREATE INDEX idx_outbox_unpublished ON outbox (id) WHERE published_at IS NULL;

CREATE TABLE idempotency_key (
    customer_id     INTEGER NOT NULL,
    key             TEXT    NOT NULL,
    fingerprint     TEXT    NOT NULL,
    state           TEXT    NOT NULL,
    booking_id      INTEGER,
    response_status INTEGER,
    response_body   TEXT,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    PRIMARY KEY (customer_id, key)
) WITHOUT ROWID;
CREATE INDEX idx_idempotency_created ON idempotency_key (created_at);
