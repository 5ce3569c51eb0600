/**
 * A stateful stand-in for the gateway's pull-worker operations (queue,
 * leaseTasks, heartbeat, completeTask, failTask, workflow), enough to drive
 * the Worker's loop in unit tests. Lease tokens change per lease and stale
 * ones are refused with CONFLICT, like the real gateway.
 */
import type { Task, Workflow } from "../types.js";
import { gqlError, ok, type FakeReply, type FakeRequest } from "./fake-gateway.js";

export type Outcome = { kind: "complete"; result: unknown } | { kind: "fail"; error: string; retryable: boolean | null };

export interface FakeTaskState {
  task: Task;
  leaseToken: string | null;
  generation: number;
  outcomes: Outcome[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class FakePullQueue {
  readonly tasks = new Map<string, FakeTaskState>();
  readonly leaseRequests: Array<{ max: number; leaseSeconds: number; waitSeconds: number; startAheadMs: number }> = [];
  mode: "PULL" | "PUSH" = "PULL";
  exists = true;
  workflows = new Map<string, Workflow>();
  /** While set, completeTasks calls wait for it before recording anything (a slow gateway). */
  holdCompletions: Promise<void> | null = null;
  /** Every leaseTasks answer takes at least this long (a gateway under load). */
  leaseDelayMs = 0;
  /** The fake server's clock runs this far ahead of this process's (negative: behind). */
  clockOffsetMs = 0;
  /** A leaseTasks answer takes this long on its way back, after its leases were taken (startInMs counted). */
  answerDelayMs = 0;
  /** While set, leaseTasks answers INTERNAL_SERVER_ERROR (a gateway that lost its database). */
  failLeases = false;
  /** failTask answers BAD_USER_INPUT for an error this matches (a gateway rule the SDK did not foresee). */
  refuseError: ((error: string) => boolean) | null = null;
  /** Most leaseTasks calls open at once, and most tasks they asked for together. */
  readonly peakLeases = { calls: 0, asked: 0 };
  #open = { calls: 0, asked: 0 };
  #next = 0;

  add(payload: unknown, extra: Partial<Task> = {}): string {
    const id = `task_${++this.#next}`;
    const now = new Date().toISOString();
    this.tasks.set(id, {
      task: {
        id,
        type: "test",
        queue: "default",
        payload,
        status: "QUEUED",
        priority: "NORMAL",
        runAt: now,
        createdAt: now,
        startedAt: null,
        completedAt: null,
        attempts: 0,
        maxAttempts: 3,
        timeoutSeconds: 300,
        result: null,
        lastError: null,
        idempotencyKey: null,
        orderingKey: null,
        workflowId: null,
        scheduleId: null,
        cancelRequested: false,
        ...extra,
      },
      leaseToken: null,
      generation: 0,
      outcomes: [],
    });
    return id;
  }

  state(id: string): FakeTaskState {
    const s = this.tasks.get(id);
    if (s === undefined) throw new Error(`no task ${id}`);
    return s;
  }

  /** cancelTask on a running task: CANCELLED, and heartbeats answer cancelRequested. */
  cancel(id: string): void {
    const s = this.state(id);
    s.task.cancelRequested = s.task.status === "RUNNING";
    s.task.status = "CANCELLED";
  }

  /** The lease expired and another worker leased the task: the old token is stale. */
  leaseElsewhere(id: string): void {
    const s = this.state(id);
    s.generation++;
    s.leaseToken = `lt_${s.generation}_elsewhere`;
    s.task.attempts++;
  }

  readonly responder = async (req: FakeRequest): Promise<FakeReply> => {
    const v = req.variables;
    switch (req.operationName) {
      case "Queue":
        return ok({
          queue: this.exists
            ? { name: v.name, mode: this.mode, endpointUrl: null, concurrency: null, rateLimit: null, paused: false, stats: { scheduled: 0, queued: 0, running: 0, retrying: 0, dead: 0, succeeded: 0, oldestQueuedAgeSeconds: null } }
            : null,
        });
      case "LeaseTasks":
        return this.failLeases ? gqlError("INTERNAL_SERVER_ERROR", "down") : this.#lease(req);
      case "Heartbeat": {
        const s = this.#held(v);
        if (s === null || !(s.task.status === "RUNNING" || (s.task.status === "CANCELLED" && s.task.cancelRequested))) {
          return gqlError("CONFLICT", "Lease is no longer held", { reason: "STALE_LEASE" });
        }
        return ok({ heartbeat: { leaseExpiresAt: new Date(Date.now() + Number(v.extendSeconds ?? 30) * 1000).toISOString(), cancelRequested: s.task.cancelRequested } });
      }
      case "CompleteTask": {
        const s = this.#held(v);
        if (s === null || s.task.status !== "RUNNING") return gqlError("CONFLICT", "Lease is no longer held", { reason: "STALE_LEASE" });
        s.outcomes.push({ kind: "complete", result: v.result });
        Object.assign(s.task, { status: "SUCCEEDED", result: v.result });
        s.leaseToken = null;
        return ok({ completeTask: s.task });
      }
      case "CompleteTasks":
      case "SettleTasks": {
        await this.holdCompletions;
        const items = v.completions as { taskId: string; leaseToken: string; result: unknown }[];
        return ok({
          completeTasks: items.map((item) => {
            const s = this.#held(item);
            if (s === null || s.task.status !== "RUNNING") return { taskId: item.taskId, accepted: false, task: null, code: "CONFLICT", message: "Lease is no longer held" };
            s.outcomes.push({ kind: "complete", result: item.result });
            Object.assign(s.task, { status: "SUCCEEDED", result: item.result });
            s.leaseToken = null;
            return { taskId: item.taskId, accepted: true, task: s.task, code: null, message: null };
          }),
        });
      }
      case "FailTask": {
        const s = this.#held(v);
        if (s === null || s.task.status !== "RUNNING") return gqlError("CONFLICT", "Lease is no longer held", { reason: "STALE_LEASE" });
        if (this.refuseError?.(String(v.error))) return gqlError("BAD_USER_INPUT", "error is not acceptable", { fieldErrors: [{ path: "error", message: "is not acceptable" }] });
        const retryable = typeof v.retryable === "boolean" ? v.retryable : null;
        s.outcomes.push({ kind: "fail", error: String(v.error), retryable });
        const again = retryable !== false && s.task.attempts < s.task.maxAttempts;
        Object.assign(s.task, { status: again ? "QUEUED" : "DEAD", lastError: v.error });
        s.leaseToken = null;
        return ok({ failTask: s.task });
      }
      case "Workflow":
        return ok({ workflow: this.workflows.get(String(v.id)) ?? null });
      default:
        return gqlError("BAD_USER_INPUT", `fake gateway does not know ${req.operationName}`);
    }
  };

  /** What the gateway's start statement reads for a workflow task: each parent's result by key; null outside workflows. */
  #parentsOf(task: Task): Record<string, unknown> | null {
    if (task.workflowId === null) return null;
    const tasks = this.workflows.get(task.workflowId)?.tasks ?? [];
    const self = tasks.find((t) => t.task.id === task.id);
    return Object.fromEntries((self?.dependsOn ?? []).map((key) => [key, tasks.find((t) => t.key === key)?.task.result ?? null]));
  }

  #held(v: { taskId?: unknown; leaseToken?: unknown }): FakeTaskState | null {
    const s = this.tasks.get(String(v.taskId));
    return s !== undefined && s.leaseToken !== null && s.leaseToken === v.leaseToken ? s : null;
  }

  async #lease(req: FakeRequest): Promise<FakeReply> {
    const max = Number(req.variables.max ?? 1);
    const leaseSeconds = Number(req.variables.leaseSeconds ?? 30);
    const waitSeconds = Number(req.variables.waitSeconds ?? 0);
    const startAheadMs = Number(req.variables.startAheadMs ?? 0);
    this.leaseRequests.push({ max, leaseSeconds, waitSeconds, startAheadMs });
    this.#open.calls++;
    this.#open.asked += max;
    this.peakLeases.calls = Math.max(this.peakLeases.calls, this.#open.calls);
    this.peakLeases.asked = Math.max(this.peakLeases.asked, this.#open.asked);
    try {
      if (this.leaseDelayMs > 0) await sleep(this.leaseDelayMs);
      const answer = await this.#leaseReady(req, max, leaseSeconds, waitSeconds, startAheadMs);
      if (this.answerDelayMs > 0) await sleep(this.answerDelayMs);
      return answer;
    } finally {
      this.#open.calls--;
      this.#open.asked -= max;
    }
  }

  /** Tasks due by the fake server's clock (or within startAheadMs of it), each with its startInMs as the gateway counts it. */
  async #leaseReady(req: FakeRequest, max: number, leaseSeconds: number, waitSeconds: number, startAheadMs: number): Promise<FakeReply> {
    const calledAt = Date.now();
    const deadline = calledAt + waitSeconds * 1000;
    for (;;) {
      if (req.signal.aborted) return ok({ leaseTasks: [] });
      const serverNow = Date.now() + this.clockOffsetMs;
      const ready = [...this.tasks.values()].filter((s) => s.task.status === "QUEUED" && Date.parse(s.task.runAt) <= serverNow + startAheadMs).slice(0, max);
      if (ready.length > 0 || Date.now() >= deadline) {
        // How long this call waited before leasing, as the gateway says it (Lease.waitedMs).
        const waitedMs = Date.now() - calledAt;
        const leases = ready.map((s) => {
          s.generation++;
          s.leaseToken = `lt_${s.generation}_${s.task.id}`;
          const startInMs = Math.max(0, Math.ceil(Date.parse(s.task.runAt) - serverNow));
          Object.assign(s.task, { status: "RUNNING", attempts: s.task.attempts + 1, startedAt: new Date(serverNow + startInMs).toISOString() });
          const lease = { task: { ...s.task }, leaseToken: s.leaseToken, leaseExpiresAt: new Date(serverNow + startInMs + leaseSeconds * 1000).toISOString(), startInMs, waitedMs };
          return { ...lease, parents: this.#parentsOf(s.task) };
        });
        return ok({ leaseTasks: leases });
      }
      await sleep(5);
    }
  }
}
