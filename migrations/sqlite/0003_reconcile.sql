-- The reconciler claims a pending booking for a while before asking the gateway about it.
ALTER TABLE booking ADD COLUMN claimed_until INTEGER;
