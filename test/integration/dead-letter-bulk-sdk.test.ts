/**
 * The SDK's bulk dead-letter calls against the real gateway:
 * tasks.redriveDeadLetters / discardDeadLetters (one call) and
 * redriveAllDeadLetters / discardAllDeadLetters (calls until none remain).
 */
import { TasklaneClient, type FetchLike } from "@tasklane/sdk";
import { IdPrefix, newId } from "@tasklane/core";
import { describe, expect, it } from "vitest";
import { useGateway } from "../helpers/gateway-fixture.js";
import { createTenant } from "../helpers/platform.js";
import { losingAnswers, sdkRejection as rejection } from "../helpers/sdk-calls.js";

describe("SDK: dead letters in bulk", () => {
  const platform = useGateway();
  const pool = () => platform.database.db.pool;

  async function deadTasks(tenantId: string, n: number): Promise<string[]> {
    const queue = await pool().query<{ id: string }>("SELECT id FROM queues WHERE tenant_id = $1 AND name = 'default'", [tenantId]);
    const ids = Array.from({ length: n }, () => newId(IdPrefix.task));
    await pool().query(
      `INSERT INTO tasks (id, tenant_id, queue_id, type, status, run_at, created_at, completed_at, attempts, max_attempts,
                          backoff_strategy, backoff_delay_seconds, backoff_jitter, timeout_seconds)
       SELECT id, $2, $3, 'dead', 'DEAD', now(), now(), now() - interval '1 hour' + ord * interval '1 millisecond', 1, 1, 'EXPONENTIAL', 1, true, 60
         FROM unnest($1::text[]) WITH ORDINALITY AS u(id, ord)`,
      [ids, tenantId, queue.rows[0]!.id],
    );
    return ids;
  }

  const statusesOf = async (ids: string[]) =>
    (await pool().query<{ status: string; n: number }>("SELECT status, count(*)::int AS n FROM tasks WHERE id = ANY($1) GROUP BY status", [ids])).rows;

  it("redriveAllDeadLetters calls until none remain, reporting progress; discardAllDeadLetters likewise", async () => {
    const { apiKey, tenantId } = await createTenant(platform.gateway);
    const client = new TasklaneClient({ url: platform.gateway.url, apiKey });
    const ids = await deadTasks(tenantId, 2_500);
    const progress: number[] = [];
    expect(await client.tasks.redriveAllDeadLetters({ onProgress: ({ done }) => progress.push(done) })).toBe(2_500);
    expect(progress).toEqual([1_000, 2_000, 2_500]);
    expect(await statusesOf(ids)).toEqual([{ status: "QUEUED", n: 2_500 }]);

    const more = await deadTasks(tenantId, 30);
    expect(await client.tasks.discardDeadLetters({ queue: "default", max: 10 })).toEqual({ count: 10, hasMore: true });
    expect(await client.tasks.discardAllDeadLetters({ batchSize: 15 })).toBe(20);
    expect(await statusesOf(more)).toEqual([{ status: "CANCELLED", n: 30 }]);
    expect(await client.tasks.redriveDeadLetters()).toEqual({ count: 0, hasMore: false });
  });

  it("redriveAllDeadLetters takes no more than were dead when it began, while the tasks it redrives keep dying", async () => {
    const { apiKey, tenantId } = await createTenant(platform.gateway);
    const ids = await deadTasks(tenantId, 25);
    let redrives = 0;
    // Every redriven task dies again before the next call (an endpoint refusing them all, at once).
    const dying: FetchLike = async (input, init) => {
      const res = await fetch(input, init);
      if (!/^\s*mutation RedriveDeadLetterTasks\b/.test((JSON.parse(String(init.body)) as { query: string }).query)) return res;
      redrives += 1;
      if (redrives > 10) throw new Error(`still redriving after ${redrives - 1} calls`);
      const answer = await res.text();
      await pool().query("UPDATE tasks SET status = 'DEAD', completed_at = now(), attempts = 1 WHERE id = ANY($1) AND status = 'QUEUED'", [ids]);
      return new Response(answer, { status: res.status, headers: res.headers });
    };
    const client = new TasklaneClient({ url: platform.gateway.url, apiKey, fetch: dying });
    // Without the bound each call took 10 again, hasMore true for ever: 'Error: still redriving after 10 calls'.
    expect(await client.tasks.redriveAllDeadLetters({ batchSize: 10 })).toBe(25);
    expect(redrives).toBe(3);
    const events = await pool().query<{ n: number; tasks: number }>("SELECT count(*)::int AS n, count(DISTINCT task_id)::int AS tasks FROM task_events WHERE task_id = ANY($1) AND reason = 'redrive'", [ids]);
    expect(events.rows[0]).toEqual({ n: 25, tasks: 25 });
  });

  it("refuses a bad max locally and an unknown queue with NOT_FOUND", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    let sent = 0;
    const counting: FetchLike = (input, init) => {
      sent += 1;
      return fetch(input, init);
    };
    const client = new TasklaneClient({ url: platform.gateway.url, apiKey, fetch: counting });
    expect((await rejection(client.tasks.redriveDeadLetters({ max: 0 }))).code).toBe("BAD_USER_INPUT");
    expect((await rejection(client.tasks.discardDeadLetters({ max: 10_001 }))).code).toBe("BAD_USER_INPUT");
    expect(sent).toBe(0);
    expect((await rejection(client.tasks.redriveDeadLetters({ queue: "nope" }))).code).toBe("NOT_FOUND");
    expect((await rejection(client.tasks.redriveAllDeadLetters({ queue: "nope" }))).code).toBe("NOT_FOUND");
  });

  it("never sends a call again whose answer was lost (it would take more tasks), and stops when a call redrives none", async () => {
    const { apiKey, tenantId } = await createTenant(platform.gateway);
    const ids = await deadTasks(tenantId, 5);
    const losing = losingAnswers();
    const client = new TasklaneClient({ url: platform.gateway.url, apiKey, fetch: losing.fetch });
    await rejection(client.tasks.redriveDeadLetters({ max: 2 }));
    expect(losing.sent()).toBe(1);
    // The gateway did redrive them: only the answer was lost.
    expect(await statusesOf(ids)).toEqual(expect.arrayContaining([{ status: "QUEUED", n: 2 }, { status: "DEAD", n: 3 }]));

    // A platform that says more remain while taking none (they are locked elsewhere): one call, not a spin.
    let asked = 0;
    const stuck: FetchLike = async (input, init) => {
      if (/^\s*query DeadLetterTasks\b/.test((JSON.parse(String(init.body)) as { query: string }).query)) return fetch(input, init);
      asked += 1;
      return new Response(JSON.stringify({ data: { redriveDeadLetterTasks: { count: 0, hasMore: true } } }), { headers: { "content-type": "application/json" } });
    };
    const stuckClient = new TasklaneClient({ url: platform.gateway.url, apiKey, fetch: stuck });
    expect(await stuckClient.tasks.redriveAllDeadLetters()).toBe(0);
    expect(asked).toBe(1);
  });
});
