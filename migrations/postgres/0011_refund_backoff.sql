-- Refunds are retried with exponential backoff per refund (API.md): each refund has its
-- own next attempt, so one the gateway keeps refusing never delays the others, and a
-- refusal (a 4xx answer) is kept aside, visible in /metrics, yet still retried (capped at
-- ten minutes): money is never kept.
ALTER TABLE refund ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0);
ALTER TABLE refund ADD COLUMN next_attempt_at TIMESTAMPTZ;
ALTER TABLE refund ADD COLUMN refused BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE refund ADD COLUMN last_error TEXT;
UPDATE refund SET next_attempt_at = created_at;
ALTER TABLE refund ALTER COLUMN next_attempt_at SET NOT NULL;
DROP INDEX idx_refund_pending;
CREATE INDEX idx_refund_due ON refund (next_attempt_at) WHERE status = 'PENDING';
