-- Every statement finds its seats by primary key (showtime, seat code), the hold id only a
-- condition on those rows: nothing reads show_seat by hold id. The index on it cost an
-- index entry on every change of a seat's state (none of them can be a HOT update: each
-- changes the sweeper's partial index), and could lure the planner away from the key.
DROP INDEX IF EXISTS idx_show_seat_hold;
-- (DROP INDEX locks the table while it runs: on a large live table, drop the index
-- CONCURRENTLY by hand before upgrading; this then finds nothing to do.)
