// A tenant's pull worker as its own process for the chaos suite, built on the
// SDK's Worker. One JSON line per event on stdout, which the suite turns into
// history events:
//   {"event":"started","item","taskId","attempt","leaseToken"}
//   {"event":"heartbeat","item","leaseToken","accepted"}
//   {"event":"effect","item","taskId","attempt"}       the handler's side effect, done
//   {"event":"error","phase","taskId","code","refused"}
// A task whose payload says {"mode":"crash"} kills this process (poison).
//
// env: TASKLANE_URL, TASKLANE_API_KEY, QUEUE [default], LEASE_SECONDS [30],
//      HOLD_MS [0], CONCURRENCY [4], WORKER_ID
import { Worker } from "../../packages/sdk/dist/index.js";

const say = (event, fields) => process.stdout.write(`${JSON.stringify({ event, ...fields })}\n`);
const hold = Number(process.env.HOLD_MS ?? 0);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const worker = new Worker({
  url: process.env.TASKLANE_URL,
  apiKey: process.env.TASKLANE_API_KEY,
  queue: process.env.QUEUE ?? "default",
  workerId: process.env.WORKER_ID ?? `chaos-pull-${process.pid}`,
  leaseSeconds: Number(process.env.LEASE_SECONDS ?? 30),
  pollWaitSeconds: 1,
  concurrency: Number(process.env.CONCURRENCY ?? 4),
  async handler(task, ctx) {
    const item = task.payload?.item ?? task.id;
    say("started", { item, taskId: task.id, attempt: ctx.attempt, leaseToken: ctx.leaseToken });
    if (task.payload?.mode === "crash") process.exit(3);
    if (hold > 0) {
      await sleep(hold / 2);
      // An explicit heartbeat mid-task, recorded with whether the platform still honoured the lease.
      const accepted = await ctx.heartbeat().then(() => true, () => false);
      say("heartbeat", { item, leaseToken: ctx.leaseToken, accepted });
      await sleep(hold / 2);
    }
    say("effect", { item, taskId: task.id, attempt: ctx.attempt });
    return { item, attempt: ctx.attempt };
  },
  onError(error, context) {
    say("error", { phase: context?.phase, taskId: context?.taskId, code: error?.code, refused: context?.refused === true });
  },
});
await worker.start();
say("ready", {});
process.on("SIGTERM", async () => {
  await worker.stop({ graceMs: 3_000 });
  process.exit(0);
});
