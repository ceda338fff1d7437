-- The index on (status, hold_expires_at) served the sweeper, and misled the planner on the
-- hot path: a status has a handful of values, and with statistics that lag a premiere
-- (thousands of seats turn HELD within seconds) the planner took it for selective and
-- scanned every held seat of every showtime to change the few of one hold. The sweeper
-- needs only the held seats by expiry: a partial index that holds just those, which no
-- statement of the hot path can use for its seats (they are found by primary key or hold).
-- On a large existing table, create the new index CONCURRENTLY by hand before upgrading.
CREATE INDEX IF NOT EXISTS idx_show_seat_held_expiry ON show_seat (hold_expires_at)
    WHERE status = 'HELD';
DROP INDEX IF EXISTS idx_show_seat_expired;
