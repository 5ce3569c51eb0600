import type pg from "pg";
import { dedicatedClient } from "../database.js";
import { poolTypeParsers } from "../pg-timestamps.js";

/**
 * Session-level advisory lock key of the task-event relay: only the holder
 * publishes, so events leave in one order. Advisory locks are per database,
 * so deployments (and test databases) on one server do not contend.
 * The value is arbitrary; it only has to be unique among our advisory locks.
 */
export const EVENT_RELAY_LOCK_KEY = 7418802361n;

/**
 * A dedicated connection for the relay. The lock lives and dies with this
 * session, and the relay runs all its SQL on it: if the session is lost, its
 * queries fail too, so a relay can never keep publishing after its lock went
 * to a standby.
 */
export interface RelayConnection {
  readonly client: pg.Client;
  /** pg_try_advisory_lock: true when this session now holds (or already held) the relay lock. */
  tryLock(): Promise<boolean>;
  close(): Promise<void>;
}

export async function openRelayConnection(url: string, applicationName = "tasklane-event-relay"): Promise<RelayConnection> {
  const client = dedicatedClient(url, applicationName, {
    // A relay behind a dead link must stop (its query fails) rather than hang...
    query_timeout: 15_000,
    // ...and Postgres must drop its session (and the lock) within ~25 s, not the OS default of hours,
    // or a standby would wait on a lock nobody uses. These settings are per session.
    options: "-c tcp_keepalives_idle=10 -c tcp_keepalives_interval=5 -c tcp_keepalives_count=3",
    // The events of one transition statement share its now(): parsed once, not once per event
    // (parsing them was ~7% of the relay's CPU in s1).
    types: poolTypeParsers(),
  });
  // A lost connection surfaces as the next query failing; without a listener the error event would crash the process.
  client.on("error", () => undefined);
  await client.connect();
  return {
    client,
    async tryLock() {
      const res = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1::bigint) AS locked", [EVENT_RELAY_LOCK_KEY.toString()]);
      return res.rows[0]?.locked === true;
    },
    async close() {
      await client.end().catch(() => undefined);
    },
  };
}
