import { withPeer, type PeerKind } from "./peers.js";
import { withPlatform, type PlatformOptions, type TasklanePlatform, type Tenant } from "./platform.js";
import type { BenchSystem } from "./system.js";

/** Opens one system on fresh storage for `fn`, and closes it (its storage dropped) after. */
export type SystemOpener = (fn: (system: BenchSystem) => Promise<void>) => Promise<void>;

/** A Tasklane system on a platform of its own. */
export function tasklaneOpener(options: PlatformOptions, open: (platform: TasklanePlatform, tenant: Tenant) => Promise<BenchSystem>): SystemOpener {
  return (fn) =>
    withPlatform(options, async (platform, tenant) => {
      const system = await open(platform, tenant);
      try {
        await fn(system);
      } finally {
        await system.close();
      }
    });
}

export const peerOpener =
  (kind: PeerKind): SystemOpener =>
  (fn) =>
    withPeer(kind, fn);

/**
 * `runs` rounds, each opening every system afresh in turn for one `measure`.
 * Not each system's runs back to back: this machine's speed drifts by tens of
 * percent within a minute (one full run measured Tasklane PUSH at 2,421 /
 * 2,818 / 3,582 tasks/s in its first 20 s and BullMQ at ~14,300 a minute
 * later), so a system measured in one block took that minute's speed for all
 * its runs, and the ratios between systems took the drift. In rounds every
 * system takes a share of each phase.
 */
export async function inRounds(runs: number, openers: readonly SystemOpener[], measure: (system: BenchSystem, round: number) => Promise<void>): Promise<void> {
  for (let round = 0; round < runs; round++) {
    for (const open of openers) await open((system) => measure(system, round));
  }
}
