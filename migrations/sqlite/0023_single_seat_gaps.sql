-- A showtime's single-seat gap rule (API.md, Admin: "singleSeatGaps"): 'forbid' refuses a
-- hold that would leave one free seat alone. Every existing showtime keeps 'allow'.
ALTER TABLE showtime ADD COLUMN single_seat_gaps TEXT NOT NULL DEFAULT 'allow'
    CHECK (single_seat_gaps IN ('allow', 'forbid'));
