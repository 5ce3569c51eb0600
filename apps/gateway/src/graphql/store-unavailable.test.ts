import { GraphQLError } from "graphql";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { formatError } from "./errors.js";
import { isStoreUnavailable } from "./store-unavailable.js";

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe("isStoreUnavailable", () => {
  it("recognises Postgres going away, however the error is wrapped", () => {
    expect(isStoreUnavailable(withCode("terminating connection due to administrator command", "57P01"))).toBe(true);
    expect(isStoreUnavailable(withCode("the database system is starting up", "57P03"))).toBe(true);
    expect(isStoreUnavailable(withCode("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED"))).toBe(true);
    expect(isStoreUnavailable(new Error("Connection terminated unexpectedly"))).toBe(true);
    const wrapped = new GraphQLError("x", { originalError: new Error("adapter failed", { cause: withCode("reset", "ECONNRESET") }) });
    expect(isStoreUnavailable(wrapped)).toBe(true);
    expect(isStoreUnavailable(new AggregateError([withCode("refused", "ECONNREFUSED")], "all failed"))).toBe(true);
    // Prisma's shape: a known request error whose driver adapter error names the kind.
    const prisma = Object.assign(new Error("Can't reach database server"), { code: "P1001", meta: { driverAdapterError: { name: "DriverAdapterError", cause: { kind: "DatabaseNotReachable" } } } });
    expect(isStoreUnavailable(prisma)).toBe(true);
    const closed = Object.assign(new Error("Invalid invocation"), { code: "P2010", meta: { driverAdapterError: { cause: { kind: "ConnectionClosed" } } } });
    expect(isStoreUnavailable(closed)).toBe(true);
  });

  it("leaves real bugs and query errors alone", () => {
    expect(isStoreUnavailable(withCode('relation "nope" does not exist', "42P01"))).toBe(false);
    expect(isStoreUnavailable(withCode("duplicate key", "23505"))).toBe(false);
    expect(isStoreUnavailable(new TypeError("undefined is not a function"))).toBe(false);
    expect(isStoreUnavailable(undefined)).toBe(false);
  });

  it("turns such an error into OVERLOADED with retry advice in the GraphQL answer", () => {
    const log = pino({ level: "silent" });
    const error = new GraphQLError("boom", { path: ["submitTasks"], originalError: withCode("terminating connection", "57P01") });
    const formatted = formatError(error.toJSON(), error, { hideSuggestions: true, fallbackLog: log }, { requestId: "r1", log });
    expect(formatted.extensions).toMatchObject({ code: "OVERLOADED", retryAfterSeconds: 2, requestId: "r1" });
  });
});
