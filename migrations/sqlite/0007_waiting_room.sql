-- A showtime's waiting room (API.md "Waiting room"), set by an admin. The queue itself
-- lives in the admission backend (in process, or Redis); this row is its durable setting,
-- so a restart or a lost Redis never turns a room off.
CREATE TABLE waiting_room (
    showtime_id      INTEGER PRIMARY KEY REFERENCES showtime (showtime_id),
    enabled          INTEGER NOT NULL,
    active_limit     INTEGER NOT NULL CHECK (active_limit > 0),
    admission_ttl_ms INTEGER NOT NULL CHECK (admission_ttl_ms > 0),
    updated_at       INTEGER NOT NULL
);
