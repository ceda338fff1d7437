-- API.md: prices are integers in minor units from 0 to 10,000,000, and one showtime's
-- categories share one currency, so the sum of at most 8 seats always fits and is exact.
-- The API validates both; the database asserts them too (NOT VALID: rows written before
-- this migration are not rechecked, checkout's checked sum refuses any that break it).
ALTER TABLE price ADD CONSTRAINT price_amount_range
    CHECK (amount BETWEEN 0 AND 10000000) NOT VALID;

CREATE FUNCTION boxoffice_price_one_currency() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM price WHERE showtime_id = NEW.showtime_id
                                   AND currency <> NEW.currency) THEN
    RAISE EXCEPTION 'showtime % mixes currencies', NEW.showtime_id USING ERRCODE = '23514';
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER price_one_currency BEFORE INSERT OR UPDATE ON price
    FOR EACH ROW EXECUTE FUNCTION boxoffice_price_one_currency();
