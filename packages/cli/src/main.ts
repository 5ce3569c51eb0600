#!/usr/bin/env node
/**
 * The `tasklane` executable. Exits with runCli's code once stdout and stderr
 * have taken everything written: pooled HTTP connections would otherwise
 * keep the process alive for their idle timeout.
 */
import { processIo } from "./io.js";
import { runCli } from "./run.js";

// `tasklane tasks list | head`: the reader left; what is left to print is not wanted.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

const code = await runCli(process.argv.slice(2), processIo());
await Promise.all([process.stdout, process.stderr].map((stream) => new Promise<void>((resolve) => stream.write("", () => resolve()))));
process.exit(code);
