-- Row-level security as defence in depth (hand-written: Prisma's schema cannot
-- express roles or policies).
--
-- The apps keep connecting as the configured DATABASE_URL user, which does the
-- platform's cross-tenant work (scheduler, worker fleet, notifier) unconfined.
-- Tenant-scoped read paths in the gateway run their queries in a transaction
-- that starts with SET LOCAL ROLE tasklane_app and SET LOCAL app.tenant_id
-- (packages/db/src/tenancy/tenant-scope.ts): as tasklane_app a query sees and
-- writes only that tenant's rows, even if its own WHERE clause forgot the tenant.
--
-- tasklane_app: NOLOGIN (only reached through SET ROLE), not an owner, no
-- BYPASSRLS. Roles belong to the cluster, so another database of the same
-- cluster (each test file has one) may have created it already.
DO $$
BEGIN
  CREATE ROLE tasklane_app NOLOGIN NOSUPERUSER NOBYPASSRLS;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
  NULL;
END $$;

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'tasklane_app' AND (rolsuper OR rolbypassrls)) THEN
    RAISE EXCEPTION 'role tasklane_app must not be a superuser or have BYPASSRLS';
  END IF;
  -- A superuser may SET ROLE to anyone; any other connecting user needs membership.
  IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    EXECUTE format('GRANT tasklane_app TO %I', current_user);
  END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
  NULL;
END $$;

DO $$
BEGIN
  EXECUTE format('GRANT USAGE ON SCHEMA %I TO tasklane_app', current_schema());
END $$;

-- Confines tasklane_app to one tenant's rows of `target`: RLS enabled and
-- forced (the owner is subject too), a permissive policy letting every other
-- role through (the platform's own connection does cross-tenant work; grants
-- govern other roles) and a RESTRICTIVE policy for tasklane_app, so no
-- permissive policy added later can widen what the app role sees.
--
-- The restrictive policy tests current_user instead of naming the role in TO:
-- in PostgreSQL 15 the connecting user must be a member of tasklane_app to SET
-- ROLE to it, and a policy TO a role also binds its (inheriting) members,
-- which would confine the platform's own connection as well.
--
-- Later migrations that add a table with a tenant_id column call
-- SELECT tasklane_enable_tenant_rls('new_table'); test/integration/tenancy-rls
-- fails until they do.
CREATE OR REPLACE FUNCTION tasklane_enable_tenant_rls(target regclass, tenant_column text DEFAULT 'tenant_id') RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  rule text := format('current_user <> %L OR %I = current_setting(%L, true)', 'tasklane_app', tenant_column, 'app.tenant_id');
BEGIN
  EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', target);
  EXECUTE format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', target);
  EXECUTE format('DROP POLICY IF EXISTS platform_access ON %s', target);
  EXECUTE format('CREATE POLICY platform_access ON %s AS PERMISSIVE FOR ALL TO PUBLIC USING (true) WITH CHECK (true)', target);
  EXECUTE format('DROP POLICY IF EXISTS tenant_isolation ON %s', target);
  EXECUTE format('CREATE POLICY tenant_isolation ON %s AS RESTRICTIVE FOR ALL TO PUBLIC USING (%s) WITH CHECK (%s)', target, rule, rule);
  EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %s TO tasklane_app', target);
END $$;

DO $$
DECLARE
  t regclass;
BEGIN
  FOR t IN
    SELECT c.oid::regclass FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped
    WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
  LOOP
    PERFORM tasklane_enable_tenant_rls(t);
  END LOOP;
  PERFORM tasklane_enable_tenant_rls('tenants', 'id');
END $$;

-- Identity columns of tenant tables (task_events, task_attempts, outbox) for inserts made as the app role.
DO $$
BEGIN
  EXECUTE format('GRANT USAGE ON ALL SEQUENCES IN SCHEMA %I TO tasklane_app', current_schema());
END $$;
