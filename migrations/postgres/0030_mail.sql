-- The outbox's consumers beside the relay (the e-mail sender, docs/tickets.md "E-mail"):
-- each reads the events in id order from its own position, which moves only forward and
-- only while the consumer holds its lease (relay_lease, under the consumer's name).
CREATE TABLE outbox_consumer (
    name       TEXT        PRIMARY KEY,
    position   BIGINT      NOT NULL CHECK (position >= 0),
    updated_at TIMESTAMPTZ NOT NULL
);
