import { describe, expect, it } from "vitest";
import { ExitCode } from "./errors.js";
import { runCli } from "./run.js";
import { recordingIo, scriptedFetch } from "./test-support/recording-io.js";

const queue = { name: "emails", mode: "PULL", endpointUrl: null, concurrency: null, rateLimit: null, paused: false, stats: { scheduled: 0, queued: 5, running: 0, retrying: 0, dead: 0, succeeded: 0, oldestQueuedAgeSeconds: 3 } };

describe("Ctrl-C at a confirmation", () => {
  it("stops the command as Ctrl-C does (exit 130, 'Interrupted.'), nothing purged or discarded", async () => {
    for (const argv of [["queues", "purge", "emails"], ["dead-letters", "discard", "--all"]]) {
      const io = recordingIo({ stdinIsTTY: true, answers: [null] });
      const gateway = scriptedFetch((operation) => ({
        body: { data: operation === "Queue" ? { queue } : { deadLetterTasks: { nodes: [], pageInfo: { hasNextPage: false, endCursor: null }, totalCount: 2 } } },
      }));
      const code = await runCli(["--api-key", "tlk_k", ...argv], io, { fetch: gateway.fetch });
      expect(code, argv.join(" ")).toBe(ExitCode.INTERRUPTED);
      expect(io.asked).toHaveLength(1);
      expect(io.stderr).toBe("\nInterrupted.\n");
      expect(gateway.calls.map((c) => c.operation)).not.toContain("PurgeQueue");
      expect(gateway.calls.map((c) => c.operation)).not.toContain("DiscardDeadLetterTasks");
    }
  });
});
