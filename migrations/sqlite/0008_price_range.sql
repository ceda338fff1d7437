-- API.md: prices are integers in minor units from 0 to 10,000,000, and one showtime's
-- categories share one currency, so the sum of at most 8 seats always fits and is exact.
-- The API validates both; the database asserts them too (SQLite cannot add a CHECK to an
-- existing table, so triggers do, on INSERT and UPDATE).
CREATE TRIGGER price_amount_range BEFORE INSERT ON price
WHEN NEW.amount < 0 OR NEW.amount > 10000000 OR typeof(NEW.amount) <> 'integer'
BEGIN
  SELECT RAISE(ABORT, 'price amount out of range');
END;

CREATE TRIGGER price_one_currency BEFORE INSERT ON price
WHEN EXISTS (SELECT 1 FROM price WHERE showtime_id = NEW.showtime_id
                                   AND currency <> NEW.currency)
BEGIN
  SELECT RAISE(ABORT, 'showtime mixes currencies');
END;

CREATE TRIGGER price_amount_range_update BEFORE UPDATE OF amount ON price
WHEN NEW.amount < 0 OR NEW.amount > 10000000 OR typeof(NEW.amount) <> 'integer'
BEGIN
  SELECT RAISE(ABORT, 'price amount out of range');
END;

CREATE TRIGGER price_one_currency_update BEFORE UPDATE OF currency ON price
WHEN EXISTS (SELECT 1 FROM price WHERE showtime_id = NEW.showtime_id
                                   AND category <> NEW.category AND currency <> NEW.currency)
BEGIN
  SELECT RAISE(ABORT, 'showtime mixes currencies');
END;
