-- Sales close, and the cinema's time zone (API.md "Showtimes and the seat map"): the IANA
-- name of the cinema's local time ('UTC' for every existing showtime), and how many
-- minutes before its start sales close (0: at the start; at most a week). The writer
-- refuses a hold of a closed showtime inside its transaction, on the store's clock.
ALTER TABLE showtime ADD COLUMN time_zone TEXT NOT NULL DEFAULT 'UTC'
    CHECK (length(time_zone) BETWEEN 1 AND 64);
ALTER TABLE showtime ADD COLUMN sales_close_minutes INTEGER NOT NULL DEFAULT 0
    CHECK (sales_close_minutes BETWEEN 0 AND 10080);
