-- The index on (status, hold_expires_at) served the sweeper, and misled the planner on the
-- hot path: a status has a handful of values, and with statistics that lag a premiere
-- (thousands of seats turn HELD within seconds) the planner took it for selective and
-- scanned every held seat of every showtime to change the few of one hold. The sweeper
-- needs only the held seats by expiry: a partial index that holds just those. The hot
-- path's statements of migrations 0012 and 0013 name their seats by primary key and hold
-- only, so it cannot lure them; the general transactions' (extend, the general checkout)
-- still filter on hold_expires_at and could in principle use it.
-- On a large existing table, create the new index CONCURRENTLY by hand before upgrading.
CREATE INDEX IF NOT EXISTS idx_show_seat_held_expiry ON show_seat (hold_expires_at)
    WHERE status = 'HELD';
DROP INDEX IF EXISTS idx_show_seat_expired;
