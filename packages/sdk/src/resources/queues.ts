/**
 * Queues (contract: upsertQueue, queue, queues, pauseQueue, resumeQueue).
 */
import { parseInput } from "@tasklane/core/schemas/parse";
import { upsertQueueInputSchema } from "@tasklane/core/schemas/queue";
import { QUEUE_FIELDS } from "../graphql/fragments.js";
import type { CallOptions, GraphQLTransport } from "../transport.js";
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
}
