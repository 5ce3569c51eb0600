/**
 * Platform limits. One place so the API, SDK validation and the README agree.
 * Byte limits are measured on the UTF-8 JSON encoding (what is stored and sent).
 */

/** Largest task payload: 256 KiB, like SQS; bigger blobs belong in object storage. */
export const MAX_PAYLOAD_BYTES = 262_144;
/** Largest task result a worker may report (same reasoning as the payload). */
export const MAX_RESULT_BYTES = 262_144;
/** Task metadata is for small labels, not data. */
export const MAX_METADATA_BYTES = 16_384;
/** Deepest JSON nesting accepted; deeper values are almost always bugs and strain recursive encoders. */
export const MAX_JSON_DEPTH = 32;
/** Most inputs in one submitTasks call (the contract asks for at least 1,000). */
export const MAX_BATCH_SIZE = 1000;
/** Longest task type name. */
export const MAX_TYPE_LENGTH = 200;
/** Longest queue name. */
export const MAX_QUEUE_NAME_LENGTH = 64;
/** Queue names: a safe subset for Redis keys, metrics labels and URLs. */
export const QUEUE_NAME_PATTERN = new RegExp(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,${MAX_QUEUE_NAME_LENGTH - 1}}$`);
/** QUEUE_NAME_PATTERN in words: the API's refusal and the console's hint both say this. */
export const QUEUE_NAME_RULE = `1-${MAX_QUEUE_NAME_LENGTH} characters of letters, digits, '_', '.', '-', starting with a letter or digit`;
/** Longest idempotency or ordering key (fits a btree index comfortably). */
export const MAX_KEY_LENGTH = 255;
/** Longest endpoint/callback/webhook URL (the de facto browser and proxy limit). */
export const MAX_URL_LENGTH = 2048;
/** Error strings longer than this are truncated, not refused: a failing worker must still be able to report. */
export const MAX_ERROR_LENGTH = 8192;
/** Highest maxAttempts a task may ask for. */
export const MAX_MAX_ATTEMPTS = 100;
/** Attempts in all (first included) when the task does not say. */
export const DEFAULT_MAX_ATTEMPTS = 3;
/** Attempt timeout when the task does not say. */
export const DEFAULT_TIMEOUT_SECONDS = 300;
/** Longest attempt timeout: one day. */
export const MAX_TIMEOUT_SECONDS = 86_400;
/** Furthest a task may be scheduled ahead: 366 days (a yearly job plus a leap day). */
export const MAX_DELAY_SECONDS = 366 * 86_400;
/** Longest single retry delay (backoff and Retry-After alike): one day. */
export const MAX_BACKOFF_SECONDS = 86_400;
/** Largest page a list query returns. */
export const MAX_PAGE_SIZE = 500;
/** Page size when `first` is not given. */
export const DEFAULT_PAGE_SIZE = 50;
/** Longest lease (and heartbeat extension) a pull worker may take. */
export const MAX_LEASE_SECONDS = 3600;
/** Lease length when leaseTasks does not say. */
export const DEFAULT_LEASE_SECONDS = 30;
/** Most tasks one leaseTasks call returns. */
export const MAX_LEASE_BATCH = 100;
/** Longest long-poll in leaseTasks, below common proxy idle timeouts. */
export const MAX_WAIT_SECONDS = 20;
/** leaseTasks(startAheadMs): how far ahead of their runAt tasks may be leased (and held by the worker). */
export const MAX_START_AHEAD_MS = 1_000;
/** The PUSH worker's WORKER_START_AHEAD_MS unless set (packages/config). */
export const DEFAULT_START_AHEAD_MS = 50;
/**
 * The SDK Worker's startAheadMs unless set. Its long polls lease once a task
 * is due within half of it (the gateway gathers), so each lease is still at
 * least DEFAULT_START_AHEAD_MS ahead of its task.
 */
export const DEFAULT_LEASE_AHEAD_MS = 2 * DEFAULT_START_AHEAD_MS;
/**
 * How long before a delayed task is due a consumer that takes tasks ahead
 * (by `aheadMs`) looks for it: once one is due within half its look-ahead, it
 * takes every task due within all of it, so tasks due one after another start
 * in batches, each still at least half the look-ahead early. The gateway's
 * waiting lease calls and the PUSH worker's takes both gather so.
 */
export function gatherLeadMs(aheadMs: number): number {
  return aheadMs / 2;
}
/** Every tenant starts with a PULL queue of this name (contract convention). */
export const DEFAULT_QUEUE_NAME = "default";
/**
 * Most tasks in one workflow. Every task of a workflow is written in the
 * submitting transaction, so this bounds that transaction (2,000 rows plus
 * their edges commit in well under a second) as well as the graph checks.
 */
export const MAX_WORKFLOW_TASKS = 2000;
/** Most dependency edges in one workflow: a fan-in of every task into one join still fits. */
export const MAX_WORKFLOW_EDGES = 20_000;
/**
 * Most bytes of parents' results handed to a workflow task as it starts (the
 * lease's and the PUSH body's `parents`), measured on each result's stored
 * JSON text. Parents are taken in key order (byte order) while the running
 * total stays within it; each one past it is handed as
 * `{resultOmitted: true, taskId, resultBytes}` and its result read through
 * `task(id)`. Without a bound a join of 2,000 parents could be handed 500 MiB:
 * past jsonb's 255 MiB ceiling its start failed every time (and with it the
 * whole lease batch), and a lease of MAX_LEASE_BATCH such tasks stays at
 * 100 MiB of parents with this one. Trigger.dev likewise offloads outputs
 * over 512 KB rather than inline them.
 */
export const MAX_INLINE_PARENT_RESULTS_BYTES = 1_048_576;
/** What `parents` holds for a parent whose result was left out (MAX_INLINE_PARENT_RESULTS_BYTES). */
export interface OmittedParentResult {
  resultOmitted: true;
  /** The parent task: its result is `task(id: taskId) { result }`. */
  taskId: string;
  /** Size of the result left out, on the measure of MAX_INLINE_PARENT_RESULTS_BYTES. */
  resultBytes: number;
}
/** Workflow task keys: safe in logs, URLs and JSON object keys (`parents`). */
export const WORKFLOW_KEY_PATTERN = /^[A-Za-z0-9_.:-]{1,100}$/;
/** Live webhook endpoints per tenant: each terminal event fans out to all of them, so the count bounds that work. */
export const MAX_WEBHOOKS_PER_TENANT = 50;
/**
 * Queues per tenant (deleteQueue frees a place). Every
 * worker's queue directory and the fair fetcher hold all of them, so one
 * tenant's millions would slow every tenant: 1,000, like Cloud Tasks' default
 * queue quota per project. Updating an existing queue is never refused.
 */
export const MAX_QUEUES_PER_TENANT = 1000;
/**
 * Live schedules per tenant (a deleted one frees its slot). The scheduler
 * claims and materialises every due schedule of every tenant, so the count
 * bounds one tenant's share of its work. Updating one is never refused.
 */
export const MAX_SCHEDULES_PER_TENANT = 1000;

/**
 * Live API keys per tenant: not revoked, made by createApiKey (they never
 * expire). Every key is a credential to audit and the apiKeys list answers
 * them all unpaged, so 100 keeps both small; a revoked key frees its slot.
 * Console session keys (consoleSignIn, each expiring after 12 h) are outside
 * it: a tenant at the cap must still be able to sign in to the console,
 * where it would revoke keys.
 */
export const MAX_API_KEYS_PER_TENANT = 100;
/**
 * Session keys one console user keeps, live or expired: signing in deletes
 * that user's oldest beyond it (signing out the session that held it). They
 * are outside MAX_API_KEYS_PER_TENANT, so this is what bounds them, and with
 * it the apiKeys list, however often a user signs in.
 */
export const MAX_CONSOLE_SESSIONS_PER_USER = 10;

/** A queue's start rate: a token bucket refilled at perSecond, holding up to burst. */
export interface StartRate {
  perSecond: number;
  burst: number;
}

/** A burst left out is one second's worth, never less than 1. */
export function defaultBurst(perSecond: number): number {
  return Math.max(1, Math.ceil(perSecond));
}

/** A queue's stored rate columns as a StartRate; null when it has none. */
export function startRateOf(perSecond: number | null | undefined, burst: number | null | undefined): StartRate | null {
  return perSecond == null ? null : { perSecond, burst: burst ?? defaultBurst(perSecond) };
}
