-- Functions later migrations replaced and nothing calls any more, dropped so that the
-- schema holds one implementation of each rule:
--   boxoffice_hold_batch (0012, 0017): holds are decided by boxoffice_hold_picks (0024, 0025),
--     which carries the seat rules' picks and guards and the sales close;
--   boxoffice_customer_held (0008): the hold limit is counted inside boxoffice_hold_picks;
--   boxoffice_settle_confirm (0013, 0016): confirmations go through
--     boxoffice_settle_confirm_batch (0016, 0018), whose batch of one it had become.
-- Instances older than migration 0024 call the first of these: they must be stopped before
-- this migration runs (docs/operations.md, upgrading).
DROP FUNCTION IF EXISTS boxoffice_hold_batch(BIGINT, BIGINT, UUID[], BIGINT[], INT[], TEXT[],
                                             BIGINT[], INT);
DROP FUNCTION IF EXISTS boxoffice_customer_held(BIGINT, BIGINT, TIMESTAMPTZ);
DROP FUNCTION IF EXISTS boxoffice_settle_confirm(BIGINT, TEXT, TEXT, BIGINT, BIGINT, TEXT, UUID);
