-- Checkout's idempotency keys carry a claim (a token and its lease), so a request that died
-- can be carried on by a retry, and the hold's expiry before and after checkout re-armed it,
-- so a checkout the gateway refused can be undone.
ALTER TABLE idempotency_key ADD COLUMN lock_token TEXT;
ALTER TABLE idempotency_key ADD COLUMN locked_until INTEGER;
ALTER TABLE idempotency_key ADD COLUMN hold_expiry_before INTEGER;
ALTER TABLE idempotency_key ADD COLUMN hold_expiry_after INTEGER;
