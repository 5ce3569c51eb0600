/** The answer of the bulk dead-letter mutations. Not in the contract: an addition. */
import { Field, Int, ObjectType } from "type-graphql";

@ObjectType("DeadLetterBatch", { simpleResolvers: true, description: "what one redriveDeadLetterTasks or discardDeadLetterTasks call did" })
export class DeadLetterBatch {
  @Field(() => Int, { description: "tasks redriven (or discarded) by this call" })
  count!: number;

  @Field(() => Boolean, { description: "whether such dead tasks remain: call again until false" })
  hasMore!: boolean;
}
