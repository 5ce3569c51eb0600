/**
 * What one API call costs the gateway (and Postgres), by kind of call: the
 * real platform (withPlatform, the gateway as production runs it) driven
 * through the SDK client with a few calls in flight, the gateway's CPU read
 * from /proc around each phase. At 1,000 tasks/s a PULL task costs the
 * platform several times its s1 CPU, nearly all of it per call (~250 calls a
 * second in s4), so a change to the per-call path is measured here: the end
 * to end runs' spread hides a few percent.
 *
 *   npm run build && node test/bench/dist/micro/gateway-per-call.js [--calls 2000] [--rounds 5] [--in-flight 4] [--profile]
 *
 * `--profile` runs the gateway under node --cpu-prof (into bench-results/profiles);
 * `--setup <sql>` runs SQL on the platform's database first (a schema variant without a migration).
 *
 * Phases per round: `{ __typename }` (HTTP, auth, rate limit and Apollo's
 * pipeline alone), submitTasks of 10, leaseTasks of 10 (no wait, tasks
 * present), completeTasks of 10 answering outcomes only (what the SDK Worker
 * sends), leaseTasks on an empty queue (no wait). Compare variants in
 * alternating invocations: this machine's speed drifts from minute to minute.
 */
import { parseArgs } from "node:util";
import type { Lease } from "@tasklane/sdk";
import { CpuMeter, POSTGRES_LABEL } from "../lib/cpu.js";
import { withPlatform, type Tenant } from "../lib/platform.js";
import { spread } from "../lib/stats.js";

const BATCH = 10;
const QUEUE = "default";
const EMPTY_QUEUE = "per-call-empty";
const WORKER = "gateway-per-call";

const PHASES = ["typename", "submit10", "lease10", "settle10", "leaseEmpty"] as const;
type Phase = (typeof PHASES)[number];
type PhaseCost = { gateway: number; postgres: number };

/** Runs `calls` calls of `call` with `inFlight` at a time. */
async function drive(calls: number, inFlight: number, call: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < calls) await call(next++);
    }),
  );
}

async function round(tenant: Tenant, meter: () => CpuMeter, calls: number, inFlight: number): Promise<Record<Phase, PhaseCost>> {
  const { client } = tenant;
  const out = {} as Record<Phase, PhaseCost>;
  const measure = async (phase: Phase, fn: () => Promise<void>) => {
    const m = meter();
    await m.start();
    await fn();
    const used = await m.stop();
    out[phase] = { gateway: ((used.get("gateway") ?? 0) * 1000) / calls, postgres: ((used.get(POSTGRES_LABEL) ?? 0) * 1000) / calls };
  };
  await measure("typename", () => drive(calls, inFlight, async () => void (await client.request("query PerCall { __typename }"))));
  await measure("submit10", () =>
    drive(calls, inFlight, async (i) => {
      await client.tasks.submitManyIds(Array.from({ length: BATCH }, (_, k) => ({ queue: QUEUE, type: "noop", payload: { i, k } })));
    }),
  );
  const leased: Lease[] = [];
  await measure("lease10", () =>
    drive(calls, inFlight, async () => {
      const got = await client.leases.lease({ queue: QUEUE, workerId: WORKER, max: BATCH, leaseSeconds: 300 });
      if (got.length !== BATCH) throw new Error(`a lease of ${BATCH} got ${got.length} tasks`);
      leased.push(...got);
    }),
  );
  await measure("settle10", () =>
    drive(calls, inFlight, async (i) => {
      const batch = leased.slice(i * BATCH, (i + 1) * BATCH).map((l) => ({ taskId: l.task.id, leaseToken: l.leaseToken }));
      const outcomes = await client.leases.settleMany(batch);
      if (outcomes.some((o) => !o.accepted)) throw new Error("a completion was refused");
    }),
  );
  await measure("leaseEmpty", () =>
    drive(calls, inFlight, async () => {
      const got = await client.leases.lease({ queue: EMPTY_QUEUE, workerId: WORKER, max: BATCH });
      if (got.length !== 0) throw new Error("the empty queue leased a task");
    }),
  );
  return out;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { calls: { type: "string", default: "2000" }, rounds: { type: "string", default: "5" }, "in-flight": { type: "string", default: "4" }, profile: { type: "boolean", default: false }, setup: { type: "string", multiple: true, default: [] } },
  });
  const calls = Number(values.calls);
  const rounds = Number(values.rounds);
  const inFlight = Number(values["in-flight"]);
  if (![calls, rounds, inFlight].every((n) => Number.isInteger(n) && n >= 1)) throw new Error("--calls, --rounds and --in-flight must be whole numbers of at least 1");
  await withPlatform({ worker: false, profile: values.profile ? ["gateway"] : [] }, async (platform, tenant) => {
    for (const sql of values.setup) await platform.db.pool.query(sql);
    await tenant.client.queues.upsert({ name: QUEUE, mode: "PULL" });
    await tenant.client.queues.upsert({ name: EMPTY_QUEUE, mode: "PULL" });
    const gateway = platform.processes().find((p) => p.label === "tasklane-gateway");
    if (!gateway) throw new Error("no gateway process");
    const meter = () => new CpuMeter([{ label: "gateway", pid: gateway.pid }], { pool: platform.db.pool, database: platform.db.name });
    process.stdout.write(`gateway-per-call: ${calls} calls per phase, ${inFlight} in flight, ${rounds} rounds after a warm-up; CPU µs per call, gateway / Postgres\n`);
    await round(tenant, meter, Math.min(calls, 500), inFlight);
    const results: Record<Phase, PhaseCost>[] = [];
    for (let i = 0; i < rounds; i++) {
      const r = await round(tenant, meter, calls, inFlight);
      results.push(r);
      process.stdout.write(`round ${i + 1}/${rounds}: ${PHASES.map((p) => `${p} ${r[p].gateway.toFixed(0)}/${r[p].postgres.toFixed(0)}`).join(" · ")}\n`);
    }
    const med = (p: Phase, side: keyof PhaseCost) => spread(results.map((r) => r[p][side])).median.toFixed(0);
    process.stdout.write(`median: ${PHASES.map((p) => `${p} ${med(p, "gateway")}/${med(p, "postgres")}`).join(" · ")}\n`);
  });
}

await main();
