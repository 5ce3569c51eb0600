-- Counts of tasks per queue and status, kept by the task counter triggers, in
-- place of the full (queue_id, status, priority, run_at) index on tasks.
--
-- That index was read by queue statistics and per-queue concurrency checks
-- only, and it cost its share of every task row version (three per task; no
-- status change is HOT). Worse, leaseTasks' statement is prepared once per
-- connection, and a plan cached while the table was small could walk this
-- index through every finished task of the queue instead of the waiting
-- tasks' lanes (tasks_runnable_lane_idx): Postgres-only PULL micro-benchmark
-- at ~45,000 tasks, the lease statement's backend CPU ~155 -> ~52 us per task
-- and 15 -> 3 ms per 100-task lease. Without the index the lanes are the only
-- way in by queue.

-- DropIndex
DROP INDEX "tasks_queue_id_status_priority_run_at_idx";

-- CreateTable
CREATE TABLE "queue_counters" (
    "queue_id" TEXT NOT NULL,
    "status" "TaskStatus" NOT NULL,
    "slot" INTEGER NOT NULL,
    "tenant_id" TEXT NOT NULL,
    "tasks" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "queue_counters_pkey" PRIMARY KEY ("queue_id","status","slot")
);

-- AddForeignKey
ALTER TABLE "queue_counters" ADD CONSTRAINT "queue_counters_queue_id_fkey" FOREIGN KEY ("queue_id") REFERENCES "queues"("id") ON DELETE CASCADE ON UPDATE CASCADE;

SELECT tasklane_enable_tenant_rls('queue_counters');

-- Maintenance (Prisma's schema cannot express triggers): the trigger
-- functions of migration tenant_counters now count each statement's rows once
-- by (tenant, queue, status) and hand the deltas to one function that feeds
-- both tables. Same rules: one row per session (slot = pg_backend_pid()), rows
-- written in key order, SECURITY DEFINER with a pinned search_path. A tenant or
-- queue being deleted takes its counter rows with it (cascade), so deltas for
-- one that is gone are dropped.

-- PL/pgSQL rather than SQL: it keeps its statement's plan for the session,
-- where a SQL function is planned again on every call.
CREATE FUNCTION tasklane_add_task_counts(tenant_ids text[], queue_ids text[], statuses "TaskStatus"[], deltas bigint[]) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
  WITH d AS (
    SELECT * FROM unnest(tenant_ids, queue_ids, statuses, deltas) AS d(tenant_id, queue_id, status, n) WHERE d.n <> 0
  ),
  per_queue AS (
    INSERT INTO queue_counters AS c (queue_id, status, slot, tenant_id, tasks)
    SELECT d.queue_id, d.status, pg_backend_pid(), d.tenant_id, d.n FROM d
    WHERE EXISTS (SELECT 1 FROM queues q WHERE q.id = d.queue_id)
    ORDER BY d.queue_id, d.status
    ON CONFLICT (queue_id, status, slot) DO UPDATE SET tasks = c.tasks + EXCLUDED.tasks
  )
  INSERT INTO tenant_counters AS c (tenant_id, slot, pending)
  SELECT d.tenant_id, pg_backend_pid(), sum(d.n) FROM d
  WHERE d.status IN ('SCHEDULED', 'QUEUED', 'RETRYING', 'BLOCKED')
    AND EXISTS (SELECT 1 FROM tenants t WHERE t.id = d.tenant_id)
  GROUP BY d.tenant_id HAVING sum(d.n) <> 0 ORDER BY d.tenant_id
  ON CONFLICT (tenant_id, slot) DO UPDATE SET pending = c.pending + EXCLUDED.pending;
END $$;

CREATE OR REPLACE FUNCTION tasklane_count_inserted_tasks() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM tasklane_add_task_counts(array_agg(d.tenant_id), array_agg(d.queue_id), array_agg(d.status), array_agg(d.n))
  FROM (SELECT n.tenant_id, n.queue_id, n.status, count(*) AS n FROM new_tasks n GROUP BY n.tenant_id, n.queue_id, n.status) d;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION tasklane_count_updated_tasks() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
  -- Each side counted on its own (no join): exact even if a row changed tenant or queue.
  PERFORM tasklane_add_task_counts(array_agg(d.tenant_id), array_agg(d.queue_id), array_agg(d.status), array_agg(d.n))
  FROM (
    SELECT s.tenant_id, s.queue_id, s.status, sum(s.delta)::bigint AS n FROM (
      SELECT n.tenant_id, n.queue_id, n.status, 1 AS delta FROM new_tasks n
      UNION ALL
      SELECT o.tenant_id, o.queue_id, o.status, -1 FROM old_tasks o
    ) s
    GROUP BY s.tenant_id, s.queue_id, s.status
  ) d;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION tasklane_count_deleted_tasks() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
  PERFORM tasklane_add_task_counts(array_agg(d.tenant_id), array_agg(d.queue_id), array_agg(d.status), array_agg(d.n))
  FROM (SELECT o.tenant_id, o.queue_id, o.status, -count(*) AS n FROM old_tasks o GROUP BY o.tenant_id, o.queue_id, o.status) d;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION tasklane_reset_task_counters() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
  DELETE FROM tenant_counters;
  DELETE FROM queue_counters;
  RETURN NULL;
END $$;

-- Writers wait for this migration to commit, so the backfill below and the
-- triggers see exactly the same tasks: nothing is counted twice or missed.
LOCK TABLE "tasks" IN SHARE ROW EXCLUSIVE MODE;

INSERT INTO queue_counters (queue_id, status, slot, tenant_id, tasks)
SELECT queue_id, status, 0, tenant_id, count(*) FROM "tasks"
GROUP BY queue_id, status, tenant_id;
