import { createServer, connect, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";

/**
 * A loopback TCP proxy in front of a real server (the shared Postgres), so a
 * test can take that server away from the processes it starts without
 * stopping it for everyone else on the machine: `cut()` drops every
 * connection and refuses new ones (ECONNREFUSED, as a Postgres that is down),
 * `restore()` listens again on the same port. `hang()` is the other kind of
 * outage: connections are accepted and never answered (a server that is
 * hung, or still loading its data), so a client sits connected but never
 * ready. `silence()` is a network that loses the open connections without a
 * reset (a failover, a NAT forgetting them): they stay open and carry nothing
 * either way, while new connections go through.
 */
export interface TcpProxy {
  readonly port: number;
  /** `url` with its host and port replaced by the proxy's. */
  rewrite(url: string): string;
  cut(): Promise<void>;
  /** Drops every connection and accepts new ones without forwarding anything, until restore(). */
  hang(): Promise<void>;
  /** Stops forwarding on every open connection, both ways, without closing it; new connections forward. */
  silence(): void;
  /** Forwards again (listening again after cut(); dropping the connections held after hang()). */
  restore(): Promise<void>;
  close(): Promise<void>;
  /** Bytes the target has sent back through the proxy so far (what its clients read). */
  readonly bytesFromTarget: number;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  };
  let hanging = false;
  let bytesFromTarget = 0;
  /** Silences each forwarding connection open now: its bytes are read and dropped from then on. */
  const silencers = new Set<() => void>();
  const dropAll = () => {
    for (const socket of sockets) socket.destroy();
  };
  const makeServer = () =>
    createServer((client) => {
      track(client);
      if (hanging) {
        client.on("error", () => undefined);
        return;
      }
      const upstream = connect(targetPort, targetHost);
      track(upstream);
      client.on("error", () => upstream.destroy());
      upstream.on("error", () => client.destroy());
      upstream.on("data", (chunk: Buffer) => (bytesFromTarget += chunk.length));
      client.pipe(upstream).pipe(client);
      const silence = () => {
        client.unpipe(upstream);
        upstream.unpipe(client);
        // Read and drop: neither end sees an error, a close or a byte.
        client.resume();
        upstream.resume();
      };
      silencers.add(silence);
      client.on("close", () => silencers.delete(silence));
    });
  const listen = (server: Server, port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => resolve((server.address() as AddressInfo).port));
    });
  const shut = (server: Server) =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      dropAll();
    });
  let server: Server | undefined = makeServer();
  const port = await listen(server, 0);
  return {
    port,
    get bytesFromTarget() {
      return bytesFromTarget;
    },
    rewrite(url) {
      const u = new URL(url);
      u.hostname = "127.0.0.1";
      u.port = String(port);
      return u.toString();
    },
    async cut() {
      if (!server) return;
      const s = server;
      server = undefined;
      await shut(s);
    },
    async hang() {
      hanging = true;
      dropAll();
      if (server) return;
      server = makeServer();
      await listen(server, port);
    },
    silence() {
      for (const silence of silencers) silence();
      silencers.clear();
    },
    async restore() {
      if (hanging) {
        hanging = false;
        dropAll();
      }
      if (server) return;
      server = makeServer();
      await listen(server, port);
    },
    async close() {
      if (server) await shut(server);
      server = undefined;
    },
  };
}
