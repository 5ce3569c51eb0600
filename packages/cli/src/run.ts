/**
 * runCli: one command line to its exit code. main.ts runs it for the real
 * process; tests run it with a recording CliIo and a fetch of their own.
 */
import type { FetchLike } from "@tasklane/sdk";
import type { CliContext } from "./context.js";
import { ExitCode, reportError } from "./errors.js";
import type { CliIo } from "./io.js";
import { buildProgram } from "./program.js";

export { ExitCode } from "./errors.js";
export { processIo, type CliIo } from "./io.js";

export interface RunOptions {
  /** Requests go through this fetch instead of the SDK's HTTP client. */
  fetch?: FetchLike;
}

/** `argv` without the node and script paths, e.g. ["tasks", "list", "--json"]. */
export async function runCli(argv: readonly string[], io: CliIo, options: RunOptions = {}): Promise<ExitCode> {
  const ctx: CliContext = { io, exitCode: ExitCode.OK, ...(options.fetch ? { fetch: options.fetch } : {}) };
  const program = buildProgram(ctx);
  try {
    await program.parseAsync([...argv], { from: "user" });
    return ctx.exitCode;
  } catch (error: unknown) {
    // --json anywhere on the line asks for a JSON error too, even when the line did not parse.
    return reportError(io, error, argv.includes("--json"));
  }
}
