/** API keys (contract: ApiKey, ApiKeyWithSecret). */
import { Field, ID, ObjectType } from "type-graphql";
import { DateTimeScalar } from "./scalars.js";

@ObjectType("ApiKey", { simpleResolvers: true })
export class ApiKey {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  name!: string;

  @Field(() => String, { description: "public part of the key (tl_xxxxxxxx)" })
  prefix!: string;

  @Field(() => [String], { description: "full, submit, worker or read" })
  scopes!: string[];

  @Field(() => DateTimeScalar)
  createdAt!: Date;

  @Field(() => DateTimeScalar, { nullable: true })
  lastUsedAt!: Date | null;

  @Field(() => DateTimeScalar, { nullable: true })
  revokedAt!: Date | null;

  @Field(() => DateTimeScalar, { nullable: true, description: "after this the key stops working (console sessions); null: never" })
  expiresAt!: Date | null;
}

@ObjectType("ApiKeyWithSecret", { simpleResolvers: true })
export class ApiKeyWithSecret {
  @Field(() => ApiKey)
  apiKey!: ApiKey;

  @Field(() => String, { description: "shown once" })
  secret!: string;
}
