-- The notifier caps a tenant's deliveries in flight per receiver origin
-- (scheme, host, port). Its claim computed each row's origin from the URL as
-- it read rows oldest first, so a backlog behind an origin at its cap had to
-- be read row by row to reach the tenant's other origins. The origin is now a
-- column, so the claim can skip a full origin in one index descent (index
-- webhook_deliveries_due_by_origin_idx, migration of its own).
--
-- Computed by the database, never by a writer: on every insert, and on an
-- update that changes the URL or the origin or finds it null (a delivery
-- written before this migration and redelivered later), so it always equals
-- tasklane_url_origin(url), whichever release or statement wrote the row
-- (the fan-out, tests, an older release's notifier during a rolling upgrade).
-- ~12 µs a row inserted, once, where the claim computed the same on each of
-- the 64 rows per tenant it read on every claim.
-- Nullable, no default: no table rewrite. The rows already PENDING are filled
-- by the notifier at start, in batches of 1,000, each its own short statement
-- (fillDeliveryOrigins), not here: one UPDATE over a backlog of 175,000 took
-- 7.4 s, holding those rows' locks (and, in this migration, the ALTER's lock on
-- the table) until it ended. The claim passes over a row without an origin
-- until it has one.
ALTER TABLE "webhook_deliveries" ADD COLUMN "origin" TEXT;

-- A URL's origin as the caps count it: scheme, host and port, lower-cased,
-- without user info, a default port (http 80, https 443) dropped.
CREATE FUNCTION tasklane_url_origin(url text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN regexp_replace(
  lower(regexp_replace(url, '^([A-Za-z][A-Za-z0-9+.-]*)://(?:[^/?#@]*@)?([^/?#]*).*$', '\1://\2')),
  '^(?:(http://[^/]*):80|(https://[^/]*):443)$', '\1\2');

CREATE FUNCTION tasklane_webhook_deliveries_set_origin() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.origin := tasklane_url_origin(NEW.url);
  RETURN NEW;
END
$$;

CREATE TRIGGER webhook_deliveries_origin_insert BEFORE INSERT ON "webhook_deliveries"
  FOR EACH ROW EXECUTE FUNCTION tasklane_webhook_deliveries_set_origin();
CREATE TRIGGER webhook_deliveries_origin_update BEFORE UPDATE ON "webhook_deliveries"
  FOR EACH ROW WHEN (NEW.origin IS NULL OR NEW.url IS DISTINCT FROM OLD.url OR NEW.origin IS DISTINCT FROM OLD.origin)
  EXECUTE FUNCTION tasklane_webhook_deliveries_set_origin();
