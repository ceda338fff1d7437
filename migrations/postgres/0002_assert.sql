-- Raises when an invariant a statement relies on is broken, so the statement (and with it
-- its implicit transaction) fails instead of committing a half-done change.
CREATE FUNCTION boxoffice_assert(ok BOOLEAN, message TEXT) RETURNS BOOLEAN
LANGUAGE plpgsql AS $$
BEGIN
  IF NOT ok THEN
    RAISE EXCEPTION 'boxoffice invariant broken: %', message USING ERRCODE = 'XX000';
  END IF;
  RETURN ok;
END
$$;
