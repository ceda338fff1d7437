-- The service's installation id (API.md "Checkout and bookings"): a random UUID (version 4)
-- made once, here, kept in a one-row table and read by Store::InstallationId. With a
-- booking id it is the service's Idempotency-Key at the payment gateway,
-- "<installation id>:<booking id>": two deployments sharing one gateway account never ask
-- for each other's sessions (their booking ids repeat, their installation ids do not).
--
-- A copy of the database file that starts another deployment copies the id too: give the
-- copy a new one before it takes payments (UPDATE installation_identity SET id = the
-- expression of the INSERT below), and restart its service, which reads the id once per
-- process.
CREATE TABLE installation_identity (
    only_row INTEGER PRIMARY KEY CHECK (only_row = 1),
    id       TEXT    NOT NULL
);
INSERT INTO installation_identity (only_row, id) VALUES (1, lower(
    hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) ||
    '-' || substr('89ab', 1 + (random() & 3), 1) || substr(hex(randomblob(2)), 2) || '-' ||
    hex(randomblob(6))));
