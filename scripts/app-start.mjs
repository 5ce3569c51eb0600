// How an app runs, read from its own package.json start script
// (`[…] node [--flag …] <script>`): npm start, the bench and the infra checks
// all start an app from this, so its node flags are written in one place.
// Node built-ins only: scripts/start-platform.mjs runs straight after the build.
import { readFileSync } from "node:fs";
import path from "node:path";

/** The node flags and the script (relative to `appDir`) of the app's start script. */
export function appStartCommand(appDir) {
  const { scripts } = JSON.parse(readFileSync(path.join(appDir, "package.json"), "utf8"));
  const start = String(scripts?.start ?? "");
  const match = /\bnode((?:\s+--\S+)*)\s+(\S+)\s*$/.exec(start);
  if (!match) throw new Error(`${appDir}: expected a start script ending in "node [flags] <script>", found "${start}"`);
  return { flags: match[1].split(/\s+/).filter(Boolean), script: match[2] };
}

/** The arguments for `node` that run the app as its start script does: its flags, then its script's path. */
export function appNodeArgs(appDir) {
  const { flags, script } = appStartCommand(appDir);
  return [...flags, path.join(appDir, script)];
}
