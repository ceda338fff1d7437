-- The hall's layout for the seat picker (API.md, Admin: the optional layout fields):
-- wheelchair places, and an aisle after a seat. Both default to none, so every existing
-- showtime keeps its map; a column with a constant default rewrites no row. The ALTER
-- takes show_seat's exclusive lock for a moment: it waits at most 10 s behind a long
-- transaction (then the migration fails and the next start tries again) rather than queue
-- every seat query behind it.
SET LOCAL lock_timeout = '10s';
ALTER TABLE show_seat
    ADD COLUMN accessible BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN aisle_after BOOLEAN NOT NULL DEFAULT false;
