/**
 * SDK pull workers (test/chaos/pull-worker.mjs) as processes, their JSON
 * lines turned into history events: lease starts with their fencing
 * generation, heartbeats, side effects, refused stale outcomes; an exit the
 * suite did not ask for is recorded as a crash of that executor.
 */
import type { AppProcess } from "./apps.js";
import type { Cluster, Tenant } from "./cluster.js";

interface Line {
  event: string;
  item?: string;
  taskId?: string;
  attempt?: number;
  leaseToken?: string;
  accepted?: boolean;
  refused?: boolean;
  phase?: string;
  code?: string;
}

const generationOf = (token: string | undefined) => Number(/^lt_(\d+)_/.exec(token ?? "")?.[1] ?? 0);

export interface PullWorkerOptions {
  queue: string;
  leaseSeconds: number;
  holdMs: number;
  concurrency: number;
}

export function startPullWorker(cluster: Cluster, tenant: Tenant, o: PullWorkerOptions): AppProcess {
  const app = cluster.spawn("pull-worker", {
    TASKLANE_URL: cluster.gatewayUrl,
    TASKLANE_API_KEY: tenant.apiKey,
    QUEUE: o.queue,
    LEASE_SECONDS: String(o.leaseSeconds),
    HOLD_MS: String(o.holdMs),
    CONCURRENCY: String(o.concurrency),
  });
  const h = cluster.history;
  const leases = new Map<string, { token: string; item: string }>();
  let stopping = false;
  app.onLine((raw) => {
    let l: Line;
    try {
      l = JSON.parse(raw) as Line;
    } catch {
      return;
    }
    if (l.event === "started" && l.item && l.attempt !== undefined) {
      if (l.taskId && l.leaseToken) leases.set(l.taskId, { token: l.leaseToken, item: l.item });
      h.record({ kind: "start", item: l.item, attempt: l.attempt, generation: generationOf(l.leaseToken), workerId: app.id });
    } else if (l.event === "heartbeat" && l.item) {
      h.record({ kind: "heartbeat", item: l.item, generation: generationOf(l.leaseToken), accepted: l.accepted === true });
    } else if (l.event === "effect" && l.item && l.attempt !== undefined) {
      h.record({ kind: "effect", item: l.item, attempt: l.attempt, workerId: app.id });
    } else if (l.event === "error" && l.taskId && (l.refused || l.code === "CONFLICT")) {
      const lease = leases.get(l.taskId);
      h.record({ kind: "refused", item: lease?.item ?? l.taskId, generation: generationOf(lease?.token) });
    }
  });
  const origStop = app.stop.bind(app);
  app.stop = async (ms) => {
    stopping = true;
    await origStop(ms);
  };
  void app.exited.then(() => {
    // Killed by the suite: the kill is already recorded. Otherwise the process died on its own.
    if (!stopping && app.child.signalCode !== "SIGKILL") h.record({ kind: "fault", fault: "crash", target: "pull-worker", workerId: app.id });
  });
  return app;
}

/** Number of stale outcomes the platform refused (from the workers' own reports). */
export const refusedCount = (cluster: Cluster) =>
  cluster.history.events.filter((e) => e.kind === "refused" || (e.kind === "heartbeat" && !e.accepted)).length;
