/**
 * A real graphql-ws client (the package browsers and Node apps use) for
 * subscription tests: one socket per subscription, values collected in
 * arrival order, and the close event kept so tests can read its code and reason.
 */
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import { waitFor } from "./app-process.js";

export interface WsError {
  message?: string;
  extensions?: { code?: string };
}

export interface LiveSubscription<T> {
  /** `data` of every `next`, in order. */
  readonly values: T[];
  /** GraphQL errors from `next` payloads or an `error` message. */
  readonly errors: WsError[];
  /** The socket's close event when the connection was refused or dropped. */
  closeEvent: { code: number; reason: string } | null;
  /** The server has accepted the connection (connection_ack). */
  connected: boolean;
  completed: boolean;
  /** Resolves once `predicate(values)` holds. */
  until(what: string, predicate: (values: T[]) => boolean, timeoutMs?: number): Promise<T[]>;
  close(): Promise<void>;
}

function isCloseEvent(v: unknown): v is { code: number; reason: string } {
  return typeof v === "object" && v !== null && "code" in v && typeof v.code === "number";
}

export function httpToWs(graphqlUrl: string): string {
  return graphqlUrl.replace(/^http/, "ws");
}

export function openSubscription<T>(
  wsUrl: string,
  authorization: string | undefined,
  query: string,
  variables: Record<string, unknown> = {},
): LiveSubscription<T> {
  const client: Client = createClient({
    url: wsUrl,
    webSocketImpl: WebSocket,
    connectionParams: authorization === undefined ? {} : { authorization },
    retryAttempts: 0,
    lazy: true,
  });
  const live: LiveSubscription<T> = {
    values: [],
    errors: [],
    closeEvent: null,
    connected: false,
    completed: false,
    until: (what, predicate, timeoutMs = 30_000) =>
      waitFor(what, () => {
        if (live.errors.length > 0) throw new Error(`subscription failed: ${JSON.stringify(live.errors)}`);
        return predicate(live.values) ? live.values : null;
      }, timeoutMs, 20),
    async close() {
      unsubscribe();
      await client.dispose();
    },
  };
  client.on("connected", () => {
    live.connected = true;
  });
  client.on("closed", (event) => {
    if (isCloseEvent(event)) live.closeEvent = { code: event.code, reason: event.reason };
  });
  const unsubscribe = client.subscribe<T>(
    { query, variables },
    {
      next: (result) => {
        if (result.errors) live.errors.push(...(result.errors as WsError[]));
        if (result.data) live.values.push(result.data as T);
      },
      error: (error: unknown) => {
        if (Array.isArray(error)) live.errors.push(...(error as WsError[]));
        else if (isCloseEvent(error)) live.closeEvent = { code: error.code, reason: error.reason };
        else live.errors.push({ message: String(error) });
      },
      complete: () => {
        live.completed = true;
      },
    },
  );
  return live;
}
