-- /metrics counts the last day's bookings by status; this index bounds that count.
CREATE INDEX idx_booking_created ON booking (created_at, status);
