-- The hall's layout for the seat picker (API.md, Admin: the optional layout fields):
-- wheelchair places, and an aisle after a seat. Both default to none, so every existing
-- showtime keeps its map; a column with a constant default rewrites no row. One ALTER,
-- so show_seat's exclusive lock is taken once, for a moment (the session's lock_timeout
-- bounds the wait behind a long transaction; then the next start tries again).
ALTER TABLE show_seat
    ADD COLUMN accessible BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN aisle_after BOOLEAN NOT NULL DEFAULT false;
