/** Recent task outcomes per queue, for the console's charts. Not in the contract: an addition. */
import { Field, Int, ObjectType } from "type-graphql";
import { DateTimeScalar } from "./scalars.js";

@ObjectType("ActivityBucket", { simpleResolvers: true, description: "attempt outcomes that finished within [start, start + bucket length)" })
export class ActivityBucket {
  @Field(() => DateTimeScalar)
  start!: Date;

  @Field(() => Int, { description: "attempts that succeeded (tasks that reached SUCCEEDED)" })
  succeeded!: number;

  @Field(() => Int, { description: "attempts that failed (the task went to RETRYING or DEAD)" })
  failed!: number;
}

@ObjectType("QueueActivity", { simpleResolvers: true })
export class QueueActivity {
  @Field(() => String)
  queue!: string;

  @Field(() => [ActivityBucket], { description: "oldest first, one per bucket, empty buckets included" })
  buckets!: ActivityBucket[];
}
