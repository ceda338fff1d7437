-- The outbox's consumers beside the relay (migrations/postgres/0030_mail.sql says why).
CREATE TABLE outbox_consumer (
    name       TEXT    PRIMARY KEY,
    position   INTEGER NOT NULL CHECK (position >= 0),
    updated_at INTEGER NOT NULL
) WITHOUT ROWID;
