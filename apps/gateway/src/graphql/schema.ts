/** Builds the served schema from the type-graphql classes; also used by print-schema and the schema test. */
import "reflect-metadata";
import { createPubSub } from "@graphql-yoga/subscription";
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from "graphql";
import { buildSchema } from "type-graphql";
import { resolvers } from "./resolvers/index.js";

export function buildGatewaySchema(): Promise<GraphQLSchema> {
  return buildSchema({
    resolvers: [...resolvers],
    // Inputs are validated with core's zod schemas (shared with the SDK), not class-validator.
    validate: false,
    // type-graphql insists on a pubSub once subscriptions exist; ours never publish through it: each
    // subscription brings its own source stream (realtime/), fed from Redis, so it spans gateway instances.
    pubSub: createPubSub(),
  });
}

/** Sorted, so the committed SDL only changes when the schema does. */
export function printGatewaySchema(schema: GraphQLSchema): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}
