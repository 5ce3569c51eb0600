/**
 * A graphql-ws endpoint speaking the protocol by hand, for the SDK's live
 * unit tests: the test decides when each value is sent (`push`), can refuse
 * the key (4401, as the gateway does) and counts the sockets open.
 */
import type { AddressInfo } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";

export interface ScriptedSocket {
  /** ws://127.0.0.1:port/graphql */
  readonly url: string;
  /** Sends `value` as `operation`'s data to every subscription open now; how many got it. */
  push(operation: string, value: unknown): number;
  openSockets(): number;
  /**
   * Resolves once every open socket has handled what was sent to it so far: a graphql-ws ping each,
   * whose pong the client sends only after the messages before it.
   */
  received(): Promise<void>;
  /** Resolves once `n` subscriptions are open. */
  subscribed(n?: number): Promise<void>;
  /** The variables of every subscribe message received, in order (a resubscribe after a reconnect adds one). */
  readonly subscribeVariables: Array<Record<string, unknown> | undefined>;
  /** Drops every socket without a close handshake, as a lost network would. */
  dropSockets(): void;
  close(): Promise<void>;
}

export async function startScriptedSocket(opts: { refuseKey?: boolean } = {}): Promise<ScriptedSocket> {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0, path: "/graphql" });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const subscriptions = new Map<WebSocket, Set<string>>();
  let waiters: (() => void)[] = [];
  let pongWaiters: (() => void)[] = [];
  const subscribeVariables: Array<Record<string, unknown> | undefined> = [];
  const count = () => [...subscriptions.values()].reduce((n, ids) => n + ids.size, 0);
  server.on("connection", (socket) => {
    subscriptions.set(socket, new Set());
    socket.on("close", () => subscriptions.delete(socket));
    socket.on("message", (raw) => {
      const message = JSON.parse(String(raw)) as { type: string; id?: string; payload?: { variables?: Record<string, unknown> } };
      if (message.type === "connection_init") {
        if (opts.refuseKey) socket.close(4401, "Unauthorized");
        else socket.send(JSON.stringify({ type: "connection_ack" }));
      } else if (message.type === "subscribe" && message.id !== undefined) {
        subscriptions.get(socket)?.add(message.id);
        subscribeVariables.push(message.payload?.variables);
        for (const wake of waiters) wake();
      } else if (message.type === "pong") {
        for (const wake of pongWaiters) wake();
      } else if (message.type === "complete" && message.id !== undefined) {
        subscriptions.get(socket)?.delete(message.id);
      }
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}/graphql`,
    push(operation, value) {
      let sent = 0;
      for (const [socket, ids] of subscriptions) {
        for (const id of ids) {
          socket.send(JSON.stringify({ type: "next", id, payload: { data: { [operation]: value } } }));
          sent++;
        }
      }
      return sent;
    },
    openSockets: () => server.clients.size,
    subscribeVariables,
    dropSockets() {
      for (const socket of server.clients) socket.terminate();
    },
    async received() {
      for (const socket of server.clients) {
        const ponged = new Promise<void>((resolve) => pongWaiters.push(resolve));
        socket.send(JSON.stringify({ type: "ping" }));
        await ponged;
        pongWaiters = [];
      }
    },
    async subscribed(n = 1) {
      while (count() < n) await new Promise<void>((resolve) => waiters.push(resolve));
      waiters = [];
    },
    async close() {
      for (const socket of server.clients) socket.terminate();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
