-- The booking e-mail's own mark on each outbox row (migrations/postgres/0030_mail.sql says
-- why). Rows written before this migration are not mailed.
ALTER TABLE outbox ADD COLUMN mail_pending INTEGER NOT NULL DEFAULT 1;
UPDATE outbox SET mail_pending = 0;
CREATE INDEX idx_outbox_mail_pending ON outbox (id) WHERE mail_pending = 1;
