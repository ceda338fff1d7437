-- The hall's layout for the seat picker (API.md, Admin: the optional layout fields):
-- wheelchair places, and an aisle after a seat. Both default to none, so every existing
-- showtime keeps its map.
ALTER TABLE show_seat ADD COLUMN accessible INTEGER NOT NULL DEFAULT 0 CHECK (accessible IN (0, 1));
ALTER TABLE show_seat ADD COLUMN aisle_after INTEGER NOT NULL DEFAULT 0 CHECK (aisle_after IN (0, 1));
