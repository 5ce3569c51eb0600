import { BadUserInputError, MAX_RESULT_BYTES, jsonByteLength } from "@tasklane/core";
import {
  completeLease,
  failLease,
  heartbeatLease,
  leaseFromPullQueue,
  type Database,
  type DispatchIntent,
  type StartedAttempt,
  type TaskRecord,
} from "@tasklane/db";
import type { HeartbeatOutcome } from "@tasklane/db";
import type { PullDoorbell } from "./pull-doorbell.js";

export interface LeaseArgs {
  queue: string;
  workerId: string;
  max: number;
  leaseSeconds: number;
  waitSeconds: number;
}

export interface LeaseServiceDeps {
  db: Database;
  doorbell: PullDoorbell;
  dispatch(intents: DispatchIntent[]): Promise<void>;
  horizonMs: number;
  agingSeconds: number;
}

/** Fallback re-check while long-polling: work that becomes due (a retry's backoff ends) rings no bell. */
const POLL_MS = 200;

/** Pull-mode workers: leases, heartbeats and outcomes, all fenced by the lease token. */
export class LeaseService {
  constructor(private readonly deps: LeaseServiceDeps) {}

  /**
   * Returns as soon as at least one task could be leased, or empty when the
   * wait ends; it never waits to fill `max` (contract).
   */
  async lease(tenantId: string, args: LeaseArgs, abort?: AbortSignal): Promise<StartedAttempt[]> {
    const deadline = Date.now() + args.waitSeconds * 1000;
    for (;;) {
      if (abort?.aborted) return [];
      const leases = await leaseFromPullQueue(this.deps.db, tenantId, { ...args, agingSeconds: this.deps.agingSeconds });
      const left = deadline - Date.now();
      if (leases.length > 0 || left <= 0) return leases;
      const queueId = await this.queueId(tenantId, args.queue);
      await this.deps.doorbell.wait(queueId, Math.min(left, POLL_MS), abort);
    }
  }

  heartbeat(tenantId: string, taskId: string, token: string, extendSeconds: number): Promise<HeartbeatOutcome> {
    return heartbeatLease(this.deps.db, tenantId, taskId, token, extendSeconds);
  }

  async complete(tenantId: string, taskId: string, token: string, result: unknown): Promise<TaskRecord> {
    if (result !== undefined && jsonByteLength(result) > MAX_RESULT_BYTES) {
      throw new BadUserInputError(`result exceeds ${MAX_RESULT_BYTES} bytes`, [{ path: "result", message: `at most ${MAX_RESULT_BYTES} bytes` }]);
    }
    const { task, dispatch } = await completeLease(this.deps.db, tenantId, taskId, token, result ?? null, this.deps.horizonMs);
    await this.deps.dispatch(dispatch);
    return task;
  }

  async fail(tenantId: string, taskId: string, token: string, error: string, retryable: boolean): Promise<TaskRecord> {
    const { task, dispatch } = await failLease(this.deps.db, tenantId, taskId, token, error, retryable, this.deps.horizonMs);
    await this.deps.dispatch(dispatch);
    if (task.status === "RETRYING") await this.deps.doorbell.ring([task.queueId]).catch(() => undefined);
    return task;
  }

  private async queueId(tenantId: string, name: string): Promise<string> {
    const res = await this.deps.db.pool.query<{ id: string }>("SELECT id FROM queues WHERE tenant_id = $1 AND name = $2", [tenantId, name]);
    return res.rows[0]?.id ?? "";
  }
}
