/**
 * Schedule.runs is "newest scheduled time first" (contract): a run's scheduled
 * time is its occurrence (a triggered run's: when it was triggered), not its
 * runAt, which a retry moves to the retry's time.
 */
import { describe, expect, it } from "vitest";
import { fireDueSchedules } from "@tasklane/db";
import { useGateway } from "../helpers/gateway-fixture.js";
import { codeOf, createTenant, gql } from "../helpers/platform.js";

const CREATE = `mutation ($i: CreateScheduleInput!) { createSchedule(input: $i) { id } }`;
const LEASE = `mutation { leaseTasks(queue: "default", workerId: "w", max: 1) { task { id } leaseToken } }`;
const FAIL = `mutation ($id: ID!, $t: String!) { failTask(taskId: $id, leaseToken: $t, error: "boom", retryable: true) { status runAt } }`;
const RUNS = `query ($id: ID!) { schedule(id: $id) { runs(first: 3) { id status runAt } } }`;
const TRIGGER = `mutation ($id: ID!) { triggerSchedule(id: $id) { id } }`;

describe("Schedule.runs order", () => {
  const platform = useGateway();

  it("is by scheduled time, newest first, whatever a retry did to a run's runAt", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const call = async <T>(query: string, variables: Record<string, unknown> = {}) => {
      const res = await gql<T>(platform.gateway.url, query, variables, apiKey);
      expect(codeOf(res)).toBeUndefined();
      return res.data as T;
    };
    const { createSchedule } = await call<{ createSchedule: { id: string } }>(CREATE, {
      i: { name: "retrying", cron: "* * * * * *", task: { type: "t", maxAttempts: 3, backoff: { strategy: "FIXED", delaySeconds: 600 } } },
    });
    const id = createSchedule.id;
    // Three occurrences, a few seconds ago, then a run triggered now.
    await platform.database.db.pool.query(`UPDATE schedules SET next_run_at = date_trunc('second', now()) - interval '4 seconds' WHERE id = $1`, [id]);
    await fireDueSchedules(platform.database.db, { lookaheadMs: 0, horizonMs: 60_000, limit: 100 });
    await platform.database.db.pool.query(`UPDATE schedules SET enabled = false, next_run_at = NULL WHERE id = $1`, [id]);
    const { triggerSchedule } = await call<{ triggerSchedule: { id: string } }>(TRIGGER, { id });
    const scheduled = (
      await platform.database.db.pool.query<{ id: string }>(`SELECT id FROM tasks WHERE schedule_id = $1 AND occurrence_key IS NOT NULL ORDER BY occurrence_key`, [id])
    ).rows.map((r) => r.id);
    expect(scheduled.length).toBeGreaterThanOrEqual(4);

    // The oldest occurrence's run fails and waits ten minutes for its retry.
    const [lease] = (await call<{ leaseTasks: { task: { id: string }; leaseToken: string }[] }>(LEASE)).leaseTasks;
    expect(lease?.task.id).toBe(scheduled[0]);
    const failed = await call<{ failTask: { status: string; runAt: string } }>(FAIL, { id: lease!.task.id, t: lease!.leaseToken });
    expect(failed.failTask.status).toBe("RETRYING");

    const runs = (await call<{ schedule: { runs: { id: string }[] } }>(RUNS, { id })).schedule.runs.map((r) => r.id);
    expect(runs).toEqual([triggerSchedule.id, scheduled.at(-1), scheduled.at(-2)]);
  });
});
