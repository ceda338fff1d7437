-- Running a cinema (migrations/postgres/0031_running_a_cinema.sql says why). One writer at a
-- time decides every hold, checkout, confirmation and cancel, so no lock order is needed.
ALTER TABLE showtime ADD COLUMN status TEXT NOT NULL DEFAULT 'SCHEDULED'
    CHECK (status IN ('SCHEDULED', 'CANCELLED'));
ALTER TABLE showtime ADD COLUMN cancelled_at INTEGER;
ALTER TABLE showtime ADD COLUMN cancel_reason TEXT CHECK (length(cancel_reason) <= 500);
ALTER TABLE showtime ADD COLUMN refund_until_minutes INTEGER
    CHECK (refund_until_minutes BETWEEN 0 AND 525600);
ALTER TABLE refund ADD COLUMN reason TEXT
    CHECK (reason IN ('SHOWTIME_CANCELLED', 'CUSTOMER_CANCELLED'));
CREATE INDEX idx_booking_showtime ON booking (showtime_id, status, booking_id);

CREATE TABLE admin_audit (
    audit_id    INTEGER PRIMARY KEY AUTOINCREMENT,
    showtime_id INTEGER NOT NULL REFERENCES showtime,
    actor       INTEGER NOT NULL,
    action      TEXT    NOT NULL,
    before      TEXT,
    after       TEXT,
    at          INTEGER NOT NULL
);
CREATE INDEX idx_admin_audit_showtime ON admin_audit (showtime_id, audit_id);
CREATE TRIGGER admin_audit_no_update BEFORE UPDATE ON admin_audit
BEGIN SELECT RAISE(ABORT, 'admin_audit is append-only'); END;
CREATE TRIGGER admin_audit_no_delete BEFORE DELETE ON admin_audit
BEGIN SELECT RAISE(ABORT, 'admin_audit is append-only'); END;
