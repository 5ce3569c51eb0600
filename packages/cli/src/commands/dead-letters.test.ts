import { describe, expect, it } from "vitest";
import { ExitCode } from "../errors.js";
import { runCli } from "../run.js";
import { recordingIo, scriptedFetch } from "../test-support/recording-io.js";

describe("dead-letters redrive --all failing half-way", () => {
  // 2,500 dead: the first call redrives 1,000, the second is refused for good.
  let redriveCalls = 0;
  const answers = (operation: string) => {
    if (operation === "DeadLetterTasks") return { body: { data: { deadLetterTasks: { nodes: [], pageInfo: { hasNextPage: false, endCursor: null }, totalCount: 2_500 } } } };
    if (++redriveCalls === 1) return { body: { data: { redriveDeadLetterTasks: { count: 1_000, hasMore: true } } } };
    return { body: { errors: [{ message: "Daily task quota exceeded", extensions: { code: "QUOTA_EXCEEDED" } }] } };
  };

  it("--json: one JSON object on stderr with the error and the count done before it, nothing on stdout, exit 1", async () => {
    redriveCalls = 0;
    const io = recordingIo();
    const code = await runCli(["--api-key", "tlk_k", "dead-letters", "redrive", "--all", "--json", "--quiet"], io, { fetch: scriptedFetch(answers).fetch });
    expect(code).toBe(ExitCode.FAILED);
    expect(io.stdout).toBe("");
    expect(io.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(JSON.parse(io.stderr)).toMatchObject({ error: { code: "QUOTA_EXCEEDED", message: "Daily task quota exceeded", redriven: 1_000 } });
  });

  it("human: the error, then how many were redriven before it", async () => {
    redriveCalls = 0;
    const io = recordingIo();
    const code = await runCli(["--api-key", "tlk_k", "dead-letters", "redrive", "--all", "--quiet"], io, { fetch: scriptedFetch(answers).fetch });
    expect(code).toBe(ExitCode.FAILED);
    expect(io.stderr).toMatch(/^error: QUOTA_EXCEEDED: Daily task quota exceeded\n(?: {2}\(request .*\)\n)?1,000 of 2,500 redriven before the failure; run the command again to go on\.\n$/);
  });
});
