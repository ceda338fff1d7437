-- A cancelled showtime's refund progress (docs/operations.md "Cancelling a showtime"): its
-- admin page counts the refunds of its bookings, and /metrics those of every showtime
-- cancelled in the last day (RefundWorker). Both read refunds by booking, and the recent
-- cancels by when they were cancelled.
CREATE INDEX idx_refund_booking ON refund (booking_id);
CREATE INDEX idx_showtime_cancelled ON showtime (cancelled_at) WHERE status = 'CANCELLED';
