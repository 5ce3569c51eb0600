/**
 * The two output modes: --json prints one JSON document (or, for a stream
 * such as `tasks watch`, one JSON object per line); otherwise the human form.
 */
import type { CliIo } from "../io.js";

/** One JSON document, indented: jq reads it, and so do people. */
export function printJson(io: CliIo, value: unknown): void {
  io.out(`${JSON.stringify(value, null, 2)}\n`);
}

/** One NDJSON line of a stream. */
export function printJsonLine(io: CliIo, value: unknown): void {
  io.out(`${JSON.stringify(value)}\n`);
}
