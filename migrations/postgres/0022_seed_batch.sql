-- The batches `boxoffice seed` wrote at chain scale: each batch (one cinema's day) is
-- written in one transaction together with its row here, so an interrupted seed resumes
-- at the first batch without one and never writes a batch twice.
CREATE TABLE seed_batch (
    batch     TEXT        PRIMARY KEY,
    showtimes INTEGER     NOT NULL CHECK (showtimes >= 0),
    seats     INTEGER     NOT NULL CHECK (seats >= 0),
    done_at   TIMESTAMPTZ NOT NULL DEFAULT statement_timestamp()
);
