/**
 * Everything the commands read from or write to the terminal, in one object:
 * the real process gives processIo(); unit tests give a recording one, so a
 * command's output and exit code are checked without spawning a process.
 */
import { readFile } from "node:fs/promises";
import { createInterface } from "node:readline/promises";

export interface CliIo {
  /** Writes to standard output as given (callers add the newline). */
  out(text: string): void;
  /** Writes to standard error as given. */
  err(text: string): void;
  readonly stdoutIsTTY: boolean;
  /** Progress lines rewrite themselves only on a terminal. */
  readonly stderrIsTTY: boolean;
  /** Destructive commands ask for confirmation only on a terminal. */
  readonly stdinIsTTY: boolean;
  /** A file's whole text, or standard input's for "-". */
  readText(path: string): Promise<string>;
  /** Asks `question` on stderr and answers the line typed (a terminal's stdin only). */
  ask(question: string): Promise<string>;
}

export function processIo(): CliIo {
  return {
    out: (text) => void process.stdout.write(text),
    err: (text) => void process.stderr.write(text),
    stdoutIsTTY: process.stdout.isTTY === true,
    stderrIsTTY: process.stderr.isTTY === true,
    stdinIsTTY: process.stdin.isTTY === true,
    readText: (path) => (path === "-" ? readStream(process.stdin) : readFile(path, "utf8")),
    async ask(question) {
      const rl = createInterface({ input: process.stdin, output: process.stderr });
      try {
        return await rl.question(question);
      } finally {
        rl.close();
      }
    },
  };
}

async function readStream(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString("utf8");
}
