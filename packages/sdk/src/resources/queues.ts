/**
 * Queues (contract: upsertQueue, queue, queues, pauseQueue, resumeQueue; beyond it:
 * purgeQueue, deleteQueue).
 */
import { parseInput } from "@tasklane/core/schemas/parse";
import { upsertQueueInputSchema } from "@tasklane/core/schemas/queue";
import { QUEUE_FIELDS } from "../graphql/fragments.js";
import type { CallOptions, GraphQLTransport } from "../transport.js";
import { deleteCall } from "./delete-call.js";
import type { Queue, UpsertQueueInput } from "../types.js";
import { checkLocally } from "../validate.js";

const UPSERT = `mutation UpsertQueue($input: UpsertQueueInput!) { upsertQueue(input: $input) { ...QueueFields } }
${QUEUE_FIELDS}`;
const GET = `query Queue($name: String!) { queue(name: $name) { ...QueueFields } }
${QUEUE_FIELDS}`;
const LIST = `query Queues { queues { ...QueueFields } }
${QUEUE_FIELDS}`;
const PAUSE = `mutation PauseQueue($name: String!) { pauseQueue(name: $name) { ...QueueFields } }
${QUEUE_FIELDS}`;
const RESUME = `mutation ResumeQueue($name: String!) { resumeQueue(name: $name) { ...QueueFields } }
${QUEUE_FIELDS}`;
const PURGE = `mutation PurgeQueue($name: String!) { purgeQueue(name: $name) { ...QueueFields } }
${QUEUE_FIELDS}`;
const DELETE = `mutation DeleteQueue($name: String!) { deleteQueue(name: $name) }`;

export class QueuesResource {
  readonly #transport: GraphQLTransport;

  constructor(transport: GraphQLTransport) {
    this.#transport = transport;
  }

  /** Creates the queue or updates it; omitted fields keep their value. */
  async upsert(input: UpsertQueueInput, opts?: CallOptions): Promise<Queue> {
    checkLocally("upsertQueue", () => parseInput(upsertQueueInputSchema, input));
    const data = await this.#transport.execute<{ upsertQueue: Queue }>({ operation: "upsertQueue", document: UPSERT, idempotent: true }, { input }, opts);
    return data.upsertQueue;
  }

  /** Null when the tenant has no queue of that name. */
  async get(name: string, opts?: CallOptions): Promise<Queue | null> {
    const data = await this.#transport.execute<{ queue: Queue | null }>({ operation: "queue", document: GET, idempotent: true }, { name }, opts);
    return data.queue;
  }

  async list(opts?: CallOptions): Promise<Queue[]> {
    const data = await this.#transport.execute<{ queues: Queue[] }>({ operation: "queues", document: LIST, idempotent: true }, {}, opts);
    return data.queues;
  }

  /** Holds QUEUED tasks until resume; running tasks finish. */
  async pause(name: string, opts?: CallOptions): Promise<Queue> {
    const data = await this.#transport.execute<{ pauseQueue: Queue }>({ operation: "pauseQueue", document: PAUSE, idempotent: true }, { name }, opts);
    return data.pauseQueue;
  }

  async resume(name: string, opts?: CallOptions): Promise<Queue> {
    const data = await this.#transport.execute<{ resumeQueue: Queue }>({ operation: "resumeQueue", document: RESUME, idempotent: true }, { name }, opts);
    return data.resumeQueue;
  }

  /**
   * Cancels the queue's tasks that are not running (QUEUED, SCHEDULED, RETRYING, and BLOCKED workflow
   * tasks, whose dependants are SKIPPED), as cancelTask would; RUNNING tasks finish. A task submitted
   * while the purge runs may stay. Not repeated after an ambiguous failure: the repeat would also cancel
   * the tasks submitted since the first one began.
   */
  async purge(name: string, opts?: CallOptions): Promise<Queue> {
    const data = await this.#transport.execute<{ purgeQueue: Queue }>({ operation: "purgeQueue", document: PURGE, idempotent: false }, { name }, opts);
    return data.purgeQueue;
  }

  /**
   * Deletes the queue with its finished tasks, freeing its name and its place under the queue cap.
   * CONFLICT while it has unfinished tasks (purge first; running tasks must end), a live schedule
   * targets it or a running workflow has tasks in it; the default queue is BAD_USER_INPUT. Sent again
   * after a lost answer, it finds the queue gone and answers true (delete-call.ts).
   */
  async delete(name: string, opts?: CallOptions): Promise<boolean> {
    return deleteCall(this.#transport, "deleteQueue", DELETE, { name }, opts);
  }
}
