import { BadUserInputError, NotFoundError, RateLimitedError } from "@tasklane/core";
import { GraphQLError } from "graphql";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { INTERNAL_MESSAGE, formatError, toGraphQLError } from "./errors.js";

const log = pino({ level: "silent" });
const opts = { hideSuggestions: true, fallbackLog: log };
const scope = { requestId: "req-123", log };
const fromResolver = (error: Error) => new GraphQLError(error.message, { path: ["task"], originalError: error });

describe("formatError", () => {
  it("keeps a UserError's message, code and extensions", () => {
    const error = fromResolver(new BadUserInputError("Invalid input.type", [{ path: "type", message: "too short" }]));
    expect(formatError(error.toJSON(), error, opts, scope)).toEqual({
      message: "Invalid input.type",
      path: ["task"],
      extensions: { code: "BAD_USER_INPUT", fieldErrors: [{ path: "type", message: "too short" }] },
    });
    const limited = fromResolver(new RateLimitedError(1.2));
    expect(formatError(limited.toJSON(), limited, opts, scope).extensions).toEqual({ code: "RATE_LIMITED", retryAfterSeconds: 2 });
  });

  it("finds a UserError wrapped without a path (plugins, scalars)", () => {
    const error = new GraphQLError("outer", { originalError: toGraphQLError(new NotFoundError("Task")) });
    expect(formatError(error.toJSON(), error, opts, scope).extensions).toEqual({ code: "NOT_FOUND", entity: "Task" });
  });

  it("maps Apollo's request codes to BAD_USER_INPUT and strips suggestions", () => {
    const formatted = { message: 'Cannot query field "nam" on type "Tenant". Did you mean "name"?', extensions: { code: "GRAPHQL_VALIDATION_FAILED" } };
    expect(formatError(formatted, new GraphQLError(formatted.message), opts, scope)).toEqual({
      message: 'Cannot query field "nam" on type "Tenant".',
      extensions: { code: "BAD_USER_INPUT" },
    });
  });

  it("masks anything else with the request id", () => {
    const error = fromResolver(new Error("duplicate key value violates unique constraint"));
    expect(formatError({ ...error.toJSON(), extensions: { code: "INTERNAL_SERVER_ERROR", stacktrace: ["x"] } }, error, opts, scope)).toEqual({
      message: INTERNAL_MESSAGE,
      path: ["task"],
      extensions: { code: "INTERNAL_SERVER_ERROR", requestId: "req-123" },
    });
    const graphqlOwn = new GraphQLError("Cannot return null for non-nullable field Task.queue.", { path: ["task", "queue"] });
    expect(formatError({ ...graphqlOwn.toJSON(), extensions: { code: "INTERNAL_SERVER_ERROR" } }, graphqlOwn, opts, scope).message).toBe(INTERNAL_MESSAGE);
  });
});
