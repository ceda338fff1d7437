-- The reconciler claims a pending booking for a while before asking the gateway about it,
-- so several instances never ask about the same booking at once and no transaction stays
-- open across the call.
ALTER TABLE booking ADD COLUMN claimed_until TIMESTAMPTZ;
