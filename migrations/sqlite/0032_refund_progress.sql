-- A cancelled showtime's refund progress (migrations/postgres/0032_refund_progress.sql).
CREATE INDEX idx_refund_booking ON refund (booking_id);
CREATE INDEX idx_showtime_cancelled ON showtime (cancelled_at) WHERE status = 'CANCELLED';
