-- One outbox relay at a time drains the outbox, whatever the number of instances: the
-- holder of this lease, renewed every round, taken over once it runs out.
CREATE TABLE relay_lease (
    name  TEXT        PRIMARY KEY,
    owner TEXT        NOT NULL,
    until TIMESTAMPTZ NOT NULL
);
