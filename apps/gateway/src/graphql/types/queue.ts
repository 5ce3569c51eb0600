/** Queues (contract: QueueMode, RateLimitInput, UpsertQueueInput, RateLimit, Queue, QueueStats). */
import { QueueLimit, QueueMode } from "@tasklane/core";
import { Field, Float, InputType, Int, ObjectType, registerEnumType } from "type-graphql";

registerEnumType(QueueMode, { name: "QueueMode" });
registerEnumType(QueueLimit, { name: "QueueLimit", description: "a queue limit removeLimits can take away" });

@InputType("RateLimitInput")
export class RateLimitInput {
  @Field(() => Float)
  perSecond!: number;

  @Field(() => Int, { nullable: true })
  burst?: number | null;
}

@InputType("UpsertQueueInput")
export class UpsertQueueInput {
  @Field(() => String)
  name!: string;

  @Field(() => QueueMode)
  mode!: QueueMode;

  @Field(() => String, {
    nullable: true,
    description: "required to create a PUSH queue or switch a queue to PUSH; omitted, an existing PUSH queue keeps its own",
  })
  endpointUrl?: string | null;

  @Field(() => Int, { nullable: true, description: "most tasks of this queue running at once" })
  concurrency?: number | null;

  @Field(() => RateLimitInput, { nullable: true, description: "most task starts a second, per queue" })
  rateLimit?: RateLimitInput | null;

  @Field(() => Boolean, { nullable: true })
  paused?: boolean | null;

  @Field(() => [QueueLimit], {
    nullable: true,
    description: "limits to take away, leaving the queue with no limit of that kind (a limit left null is left as it is)",
  })
  removeLimits?: QueueLimit[] | null;
}

@ObjectType("RateLimit", { simpleResolvers: true })
export class RateLimit {
  @Field(() => Float)
  perSecond!: number;

  @Field(() => Int)
  burst!: number;
}

@ObjectType("QueueStats", { simpleResolvers: true })
export class QueueStats {
  @Field(() => Int)
  scheduled!: number;

  @Field(() => Int)
  queued!: number;

  @Field(() => Int)
  running!: number;

  @Field(() => Int)
  retrying!: number;

  @Field(() => Int)
  dead!: number;

  @Field(() => Int)
  succeeded!: number;

  @Field(() => Float, { nullable: true, description: "null when nothing is queued" })
  oldestQueuedAgeSeconds!: number | null;
}

/** `stats` is a field resolver (queue.resolver.ts); `id` is internal, used to batch it. */
@ObjectType("Queue", { simpleResolvers: true })
export class Queue {
  id!: string;

  @Field(() => String)
  name!: string;

  @Field(() => QueueMode)
  mode!: QueueMode;

  @Field(() => String, { nullable: true })
  endpointUrl!: string | null;

  @Field(() => Int, { nullable: true })
  concurrency!: number | null;

  @Field(() => RateLimit, { nullable: true })
  rateLimit!: RateLimit | null;

  @Field(() => Boolean)
  paused!: boolean;
}
