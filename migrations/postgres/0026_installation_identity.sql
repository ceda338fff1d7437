-- The service's installation id (API.md "Checkout and bookings"): a random UUID made once,
-- here, kept in a one-row table and read by Store::InstallationId. With a booking id it is
-- the service's Idempotency-Key at the payment gateway, "<installation id>:<booking id>":
-- two deployments sharing one gateway account never ask for each other's sessions (their
-- booking ids repeat, their installation ids do not).
--
-- Each database keeps its own. With PostgreSQL shards each shard is a database of its own,
-- and booking ids are unique across shards, so "<its id>:<booking id>" is unique as well;
-- no shard needs to know another's id.
--
-- A copy of the database that starts another deployment (a restored backup for staging)
-- copies the id too: give the copy a new one before it takes payments, and restart its
-- services (they read the id once per process):
--   UPDATE installation_identity SET id = gen_random_uuid();
CREATE TABLE installation_identity (
    only_row BOOLEAN PRIMARY KEY DEFAULT true CHECK (only_row),
    id       UUID    NOT NULL DEFAULT gen_random_uuid()
);
INSERT INTO installation_identity DEFAULT VALUES;
