// Runs `next start` on $CONSOLE_HOST:$CONSOLE_PORT (default 127.0.0.1:3000).
// A node script rather than `next start -p ${CONSOLE_PORT:-3000}` so the
// default does not depend on the shell npm happens to use, and so the
// next-auth settings below are filled in before Next reads them.
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const port = process.env.CONSOLE_PORT || "3000";
// Loopback by default (the console sits next to the gateway); containers set 0.0.0.0 so probes and Services reach it.
const host = process.env.CONSOLE_HOST || "127.0.0.1";
process.env.NEXT_TELEMETRY_DISABLED = "1";

// next-auth refuses to run in production without a secret. Never commit one:
// a per-process secret is enough while no session can be created, but console
// instances that must share sessions need the same NEXTAUTH_SECRET set.
process.env.NEXTAUTH_SECRET ||= randomBytes(32).toString("base64url");
// next-auth v4 builds its callback URLs from NEXTAUTH_URL (else localhost:3000).
process.env.NEXTAUTH_URL ||= `http://127.0.0.1:${port}`;
// The gateway the console's server calls. Decided here because PORT is the
// gateway's port (npm start passes one environment to every app), and Next
// overwrites process.env.PORT with the console's own port once it starts.
process.env.TASKLANE_API_URL ||= `http://127.0.0.1:${process.env.PORT || "4000"}/graphql`;

const require = createRequire(import.meta.url);
const nextBin = path.join(path.dirname(require.resolve("next/package.json")), "dist/bin/next");
const appDir = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");

// Next shuts down on SIGINT/SIGTERM by itself, then exits 130/143 on purpose
// (a "signal termination"); every other Tasklane app exits 0 after a clean
// stop, and orchestrators read anything else as a crash. A clean stop that
// Next reports that way exits 0 here; any other exit code is kept.
let stopSignal;
for (const signal of ["SIGINT", "SIGTERM"]) process.once(signal, () => (stopSignal = signal));
process.on("exit", (code) => {
  if ((stopSignal === "SIGINT" && code === 130) || (stopSignal === "SIGTERM" && code === 143)) process.exitCode = 0;
});

// Run Next's own CLI in this process (no extra child to keep alive): signals
// reach Next directly.
process.argv = [process.argv[0] ?? process.execPath, nextBin, "start", appDir, "-p", port, "-H", host];
await import(pathToFileURL(nextBin).href);
