/**
 * Cron schedules as checked items: every occurrence (one per second) between
 * a schedule's first run and its end is an item that must run exactly once.
 * Runs reach the endpoint as `task:<id>`; aliases name their occurrence.
 */
import { gql, untilAnswered } from "./api.js";
import type { Cluster, Tenant } from "./cluster.js";

export interface ScheduleRef {
  id: string;
}

export async function createEverySecondSchedules(cluster: Cluster, tenant: Tenant, count: number, queue: string): Promise<ScheduleRef[]> {
  const refs: ScheduleRef[] = [];
  for (let i = 0; i < count; i++) {
    const data = await untilAnswered(
      () =>
        gql<{ createSchedule: { id: string } }>(
          cluster.gatewayUrl,
          `mutation ($i: CreateScheduleInput!) { createSchedule(input: $i) { id } }`,
          { i: { name: `every-second-${i}`, cron: "* * * * * *", task: { type: "chaos.cron", queue, payload: { schedule: i }, maxAttempts: 20, timeoutSeconds: 5 } } },
          tenant.apiKey,
        ),
      cluster.tally,
      "createSchedule",
    );
    refs.push({ id: data.createSchedule.id });
  }
  return refs;
}

/** Disables the schedules; returns when (occurrences after this may or may not fire). */
export async function disableSchedules(cluster: Cluster, tenant: Tenant, refs: ScheduleRef[]): Promise<number> {
  const at = Date.now();
  for (const r of refs) {
    await untilAnswered(
      () => gql(cluster.gatewayUrl, `mutation ($id: ID!) { updateSchedule(id: $id, input: {enabled: false}) { id } }`, { id: r.id }, tenant.apiKey),
      cluster.tally,
      "updateSchedule",
    );
  }
  return at;
}

export const occurrenceItem = (scheduleId: string, runAt: Date) => `${scheduleId}@${runAt.toISOString()}`;

/**
 * Records each expected occurrence as accepted, and each run task as an
 * alias of its occurrence. Expected: every second from the schedule's first
 * run to the later of its last run and `endAt` − 2 s (the margin covers the
 * instant the schedule was disabled).
 */
export async function recordOccurrences(cluster: Cluster, refs: ScheduleRef[], endAt: number): Promise<number> {
  const runs = await cluster.database.db.pool.query<{ id: string; schedule_id: string; run_at: Date }>(
    // Runs materialised ahead of the switch-off are SKIPPED by it: occurrences that were never due.
    `SELECT id, schedule_id, run_at FROM tasks WHERE schedule_id = ANY($1::text[]) AND status <> 'SKIPPED'`,
    [refs.map((r) => r.id)],
  );
  let expected = 0;
  for (const r of refs) {
    const mine = runs.rows.filter((t) => t.schedule_id === r.id).map((t) => t.run_at.getTime());
    if (mine.length === 0) continue;
    const first = Math.min(...mine);
    const last = Math.max(Math.max(...mine), Math.floor((endAt - 2_000) / 1_000) * 1_000);
    for (let t = first; t <= last; t += 1_000) {
      cluster.history.record({ kind: "submit", at: t, item: occurrenceItem(r.id, new Date(t)) });
      expected++;
    }
  }
  for (const t of runs.rows) cluster.history.record({ kind: "alias", item: `task:${t.id}`, to: occurrenceItem(t.schedule_id, t.run_at) });
  return expected;
}

/**
 * recordFinalState's naming: a schedule's run is its occurrence, anything else its payload item.
 * A SKIPPED run is no item: the switch-off skipped it before its occurrence (recordOccurrences).
 */
export const itemOfTask = (row: { id: string; item: string | null; status: string; schedule_id: string | null; run_at: Date }) => {
  if (row.schedule_id === null) return row.item ?? row.id;
  return row.status === "SKIPPED" ? undefined : occurrenceItem(row.schedule_id, row.run_at);
};
