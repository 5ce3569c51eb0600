import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "./logger.js";

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { lines, stream };
}

describe("createLogger", () => {
  it("keeps task fields and censors credentials, secrets and tenant data", () => {
    const { lines, stream } = capture();
    const log = createLogger("worker", "info", { destination: stream }).child({ workerId: "w-1" });
    log.child({ taskId: "task_1", tenantId: "ten_1", attempt: 2 }).info(
      {
        headers: { authorization: "Bearer tl_secret", "content-type": "application/json" },
        delivery: { secrets: ["whsec_a"], url: "https://example.com" },
        signingSecret: "whsec_b",
        task: { payload: { card: "4111" }, result: { token: "r" }, leaseToken: "lt_1_x" },
      },
      "attempt failed",
    );
    const [line] = lines;
    expect(line).toMatchObject({ app: "worker", workerId: "w-1", taskId: "task_1", tenantId: "ten_1", attempt: 2, msg: "attempt failed" });
    const text = JSON.stringify(line);
    for (const secret of ["tl_secret", "whsec_a", "whsec_b", "4111", "lt_1_x", '"r"']) expect(text).not.toContain(secret);
    expect(text).toContain("https://example.com");
    expect(text).toContain("application/json");
  });

  it("writes one shape for every app: app, ISO time, pid once", () => {
    const { lines, stream } = capture();
    createLogger("notifier", "info", { destination: stream }).child({ loop: "delivery" }).info("tick");
    const raw: string[] = [];
    const rawStream = new Writable({
      write(chunk: Buffer, _enc, done) {
        raw.push(chunk.toString());
        done();
      },
    });
    createLogger("gateway", "info", { destination: rawStream, extraRedactPaths: ["variables"] }).info({ variables: { a: 1 } }, "request");
    const [line] = lines;
    expect(line).toMatchObject({ level: 30, app: "notifier", pid: process.pid, loop: "delivery", msg: "tick" });
    expect(line).not.toHaveProperty("name");
    expect(new Date(line?.time as string).toISOString()).toBe(line?.time);
    expect(raw[0]?.match(/"pid":/g)).toHaveLength(1);
    expect(JSON.parse(raw[0] ?? "")).toMatchObject({ app: "gateway", variables: "[redacted]" });
  });
});
