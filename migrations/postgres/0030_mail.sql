-- The booking e-mail's own mark on each outbox row (docs/tickets.md, "The booking e-mail"):
-- a row is pending for the e-mail sender until the sender marks it, independently of the
-- relay's published_at. A mark per row, not a position in the outbox: ids are taken at
-- insert and transactions commit in another order, so a position would pass over a row
-- that commits after a later id's.
--
-- Rows written before this migration are not mailed (false: the column's first default,
-- which PostgreSQL records without rewriting the table); every row written from now on is
-- (the default becomes true), whichever release's instance writes it.
ALTER TABLE outbox ADD COLUMN mail_pending BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE outbox ALTER COLUMN mail_pending SET DEFAULT true;
CREATE INDEX idx_outbox_mail_pending ON outbox (id) WHERE mail_pending;
