/** Console (human) users and their sessions. Not in the contract: the console's own additions. */
import { Field, ID, ObjectType } from "type-graphql";
import { DateTimeScalar } from "./scalars.js";

@ObjectType("ConsoleUser", { simpleResolvers: true, description: "a person who signs in to the web console for one tenant" })
export class ConsoleUser {
  @Field(() => ID)
  id!: string;

  @Field(() => ID)
  tenantId!: string;

  @Field(() => String)
  email!: string;

  @Field(() => DateTimeScalar)
  createdAt!: Date;
}

@ObjectType("ConsoleSession", { simpleResolvers: true, description: "a short-lived tenant credential for the console's server, issued at sign-in" })
export class ConsoleSession {
  @Field(() => String, { description: 'an API key (scopes ["full"]) that stops working at expiresAt; keep it server-side' })
  token!: string;

  @Field(() => ID, { description: "the id of that API key, to revoke it at sign-out" })
  apiKeyId!: string;

  @Field(() => DateTimeScalar)
  expiresAt!: Date;

  @Field(() => ConsoleUser)
  user!: ConsoleUser;
}
