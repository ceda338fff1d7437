-- Which shard this database is (src/store/shards.h). A database is numbered once, when it
-- first serves as one of several shards, and keeps its number whatever order the --db
-- flags list it in. Databases not numbered yet are numbered in the order of their random
-- identity, so instances starting at once with the flags in different orders agree. Shard k issues showtime and booking ids in [k·2^40 + 1, (k+1)·2^40):
-- numbering bounds both identity sequences so and adds a CHECK, so no id of another shard
-- can ever be written here. A database that already holds showtimes was a single database,
-- whose ids are shard 0's: it can only become shard 0.
CREATE TABLE shard_identity (
    only_row    BOOLEAN PRIMARY KEY DEFAULT true CHECK (only_row),
    number      INTEGER NOT NULL CHECK (number >= 0 AND number < 8192),
    numbered_at TIMESTAMPTZ NOT NULL DEFAULT statement_timestamp()
);

CREATE TABLE database_identity (
    only_row BOOLEAN PRIMARY KEY DEFAULT true CHECK (only_row),
    id       UUID    NOT NULL DEFAULT gen_random_uuid()
);
INSERT INTO database_identity DEFAULT VALUES;

-- Numbers this database `wanted` unless it has a number already; returns its number.
CREATE FUNCTION take_shard_number(wanted INTEGER) RETURNS INTEGER
LANGUAGE plpgsql AS $$
DECLARE
    have INTEGER;
    lo   BIGINT := wanted::BIGINT * 1099511627776 + 1;
    hi   BIGINT := (wanted::BIGINT + 1) * 1099511627776 - 1;
BEGIN
    IF wanted IS NULL OR wanted < 0 OR wanted >= 8192 THEN
        RAISE EXCEPTION 'shard number % is out of range', wanted;
    END IF;
    LOCK TABLE shard_identity IN EXCLUSIVE MODE;
    SELECT number INTO have FROM shard_identity;
    IF FOUND THEN
        RETURN have;
    END IF;
    IF wanted <> 0 AND (EXISTS (SELECT 1 FROM showtime) OR EXISTS (SELECT 1 FROM booking)) THEN
        RAISE EXCEPTION 'this database holds showtimes with shard 0''s ids: it can only be shard 0';
    END IF;
    -- Shard 0 keeps its counters (its ids are the ones a single database issued).
    EXECUTE format('ALTER TABLE showtime ALTER COLUMN showtime_id SET START WITH %s '
                   'SET MINVALUE %s SET MAXVALUE %s %s', lo, lo, hi,
                   CASE WHEN wanted <> 0 THEN 'RESTART WITH ' || lo ELSE '' END);
    EXECUTE format('ALTER TABLE booking ALTER COLUMN booking_id SET START WITH %s '
                   'SET MINVALUE %s SET MAXVALUE %s %s', lo, lo, hi,
                   CASE WHEN wanted <> 0 THEN 'RESTART WITH ' || lo ELSE '' END);
    -- NOT VALID: checked for every row written from now on, without scanning the rows a
    -- single database already has (all shard 0's, issued by its sequence) under a lock.
    EXECUTE format('ALTER TABLE showtime ADD CONSTRAINT showtime_id_on_this_shard '
                   'CHECK (showtime_id BETWEEN %s AND %s) NOT VALID', lo, hi);
    EXECUTE format('ALTER TABLE booking ADD CONSTRAINT booking_id_on_this_shard '
                   'CHECK (booking_id BETWEEN %s AND %s) NOT VALID', lo, hi);
    INSERT INTO shard_identity (number) VALUES (wanted);
    RETURN wanted;
END;
$$;
