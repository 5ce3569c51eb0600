import type { BenchDatabase } from "./postgres.js";
import type { Probe } from "./probe.js";

/** One task as the scenarios ask for it; each system maps it to its own API. */
export interface TaskRequest {
  /** Reference time (ms since the epoch) carried in the payload: the task is tracked. */
  ref?: number;
  /** Not to start before this time (ms since the epoch). */
  runAt?: number;
}

/** A process worth watching (memory) and naming in the results. */
export interface WatchedProcess {
  label: string;
  pid: number;
}

/**
 * Tasklane (PUSH or PULL) or a peer, seen the same way by every scenario:
 * submit through the system's own API, let its consumers run a no-op
 * handler in a probe process, ask how much is still unfinished.
 */
export interface BenchSystem {
  /** "Tasklane PUSH", "BullMQ", … */
  readonly label: string;
  /** Submits tasks in one call of the system's batch API; resolves when acknowledged, with their ids. */
  submitMany(tasks: TaskRequest[]): Promise<string[]>;
  /** Submits one task through the system's single-task API. */
  submitOne(task: TaskRequest): Promise<string>;
  /** Starts the consumers (worker processes, probe). Idempotent. */
  startConsumers(): Promise<void>;
  /** The database the system keeps its state in (none for BullMQ). */
  readonly database: BenchDatabase | undefined;
  /** The probe where handlers run (after startConsumers). */
  readonly probe: Probe | undefined;
  /** Submitted tasks not yet finished (as the system durably records it). */
  unfinished(): Promise<number>;
  /** Tasks that ended in failure so far (should stay 0 with a no-op handler). */
  failed(): Promise<number>;
  /**
   * When the system durably accepted each task, where it records that
   * (Tasklane: created_at in Postgres); without it, callers use the submit time.
   */
  acceptedAt?(ids: string[]): Promise<Map<string, number>>;
  /** When the most recent task finished, when the system records it precisely. */
  lastFinishedAt(): Promise<number | undefined>;
  /** Throws (GiveUp) when a process of the system has died: the measurement cannot finish. */
  assertAlive(): void;
  /** Processes of this system (and its probe) for memory sampling. */
  processes(): WatchedProcess[];
  close(): Promise<void>;
}
