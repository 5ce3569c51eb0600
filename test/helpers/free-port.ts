import { createServer } from "node:net";

/**
 * Ports handed to child processes come from below Linux's ephemeral range
 * (32768-60999), which is where every `listen(0)` of the test files running
 * alongside gets its port. A port taken from that range and released was
 * once given to another file's in-process server before the child bound it:
 * the child died of EADDRINUSE and its readiness probe was answered by the
 * other file's gateway.
 */
const FIRST = 20_000;
const SPAN = 12_000;

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });
}

/** A TCP port nobody listens on right now (for child processes that need a fixed PORT). */
export function freePort(): Promise<number> {
  return freePorts(1);
}

/** The first of `count` consecutive ports nobody listens on right now. */
export async function freePorts(count: number): Promise<number> {
  for (let tries = 0; tries < 100; tries++) {
    const first = FIRST + Math.floor(Math.random() * (SPAN - count));
    let all = true;
    for (let i = 0; i < count && all; i++) all = await bindable(first + i);
    if (all) return first;
  }
  throw new Error(`no ${count} consecutive free ports in ${FIRST}-${FIRST + SPAN - 1} after 100 tries`);
}
