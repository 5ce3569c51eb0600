import { Writable } from "node:stream";
import { GraphQLError } from "graphql";
import { describe, expect, it } from "vitest";
import { createLogger } from "@tasklane/config";
import { formatError } from "./errors.js";

/** The raw lines a gateway-shaped logger writes (raw: JSON.parse would hide a repeated key). */
function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString().split("\n").filter(Boolean));
      done();
    },
  });
  const log = createLogger("gateway", "info", { destination });
  return { log, lines };
}

const occurrences = (line: string, key: string) => line.split(`"${key}":`).length - 1;

describe("formatError's log line", () => {
  it("writes the request's id once, on the request's child logger and on the fallback alike", () => {
    const { log, lines } = capture();
    const opts = { hideSuggestions: true, fallbackLog: log };
    const internal = new GraphQLError("boom", { path: ["task"], originalError: new Error("duplicate key value") });
    // The request scope's logger, as openRequestScope makes it.
    formatError(internal.toJSON(), internal, opts, { requestId: "req-12345678", log: log.child({ requestId: "req-12345678" }) });
    const lost = new GraphQLError("gone", { path: ["task"], originalError: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }) });
    formatError(lost.toJSON(), lost, opts, { requestId: "req-87654321", log: log.child({ requestId: "req-87654321" }) });
    formatError(internal.toJSON(), internal, opts, undefined);
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(occurrences(line, "requestId"), line).toBe(1);
    expect(lines.map((l) => (JSON.parse(l) as { requestId: string }).requestId)).toEqual(["req-12345678", "req-87654321", "unknown"]);
  });
});
