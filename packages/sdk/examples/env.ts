/**
 * What every example needs: a client from TASKLANE_URL and TASKLANE_API_KEY,
 * and a way to tell "run as a script" from "imported by a test".
 */
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { TasklaneClient } from "@tasklane/sdk";

export function clientFromEnv(): TasklaneClient {
  const apiKey = process.env.TASKLANE_API_KEY;
  if (apiKey === undefined || apiKey === "") {
    throw new Error("Set TASKLANE_API_KEY to a tenant API key (and TASKLANE_URL if the gateway is not on http://127.0.0.1:4000/graphql)");
  }
  return new TasklaneClient({ url: process.env.TASKLANE_URL ?? "http://127.0.0.1:4000/graphql", apiKey });
}

/** True when the module at `importMetaUrl` is the script node was started with. */
export function isMain(importMetaUrl: string): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(importMetaUrl));
  } catch {
    return false;
  }
}

/** Runs an example's main and exits non-zero with the error if it fails. */
export function runMain(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
