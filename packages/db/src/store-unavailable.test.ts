import pg from "pg";
import { describe, expect, it } from "vitest";
import { isStoreUnavailable } from "./store-unavailable.js";

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe("isStoreUnavailable", () => {
  it("recognises Postgres going away, however the error is wrapped", () => {
    expect(isStoreUnavailable(withCode("terminating connection due to administrator command", "57P01"))).toBe(true);
    expect(isStoreUnavailable(withCode("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED"))).toBe(true);
    expect(isStoreUnavailable(new Error("Connection terminated unexpectedly"))).toBe(true);
    expect(isStoreUnavailable(new Error("timeout exceeded when trying to connect"))).toBe(true);
    expect(isStoreUnavailable(new Error("Query read timeout"))).toBe(true);
    expect(isStoreUnavailable({ originalError: new Error("wrapped", { cause: withCode("reset", "ECONNRESET") }) })).toBe(true);
    expect(isStoreUnavailable(new AggregateError([withCode("refused", "ECONNREFUSED")], "all failed"))).toBe(true);
    const closed = Object.assign(new Error("Invalid invocation"), { code: "P2010", meta: { driverAdapterError: { cause: { kind: "ConnectionClosed" } } } });
    expect(isStoreUnavailable(closed)).toBe(true);
  });

  it("leaves statements the database refused alone", () => {
    const refused = new pg.DatabaseError("invalid input syntax for type json", 0, "error");
    refused.code = "22P02";
    expect(isStoreUnavailable(refused)).toBe(false);
    expect(isStoreUnavailable(withCode("deadlock detected", "40P01"))).toBe(false);
    expect(isStoreUnavailable(withCode("duplicate key", "23505"))).toBe(false);
    expect(isStoreUnavailable(new TypeError("undefined is not a function"))).toBe(false);
    expect(isStoreUnavailable(undefined)).toBe(false);
  });
});
