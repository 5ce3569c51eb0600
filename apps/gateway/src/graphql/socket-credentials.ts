/**
 * Re-checks the credential of every open WebSocket, so a key revoked (on any
 * instance) or past its expiry loses its live subscriptions too, not only its
 * next request: a subscription opened before the revocation would otherwise
 * stream the tenant's tasks for as long as its socket stays open.
 *
 * One sweep for all sockets, every `intervalMs`; sockets on the same key share
 * the authenticator's cached row, so a sweep costs a lookup per distinct key
 * per cache lifetime, not one per socket.
 */
import type { Authenticator } from "../auth/authenticate.js";
import type { Logger } from "../observability/logger.js";

/** What a sweep needs of a socket: to be closed, and to say when it is. */
export interface WatchedSocket {
  /** 1 while open (the WebSocket API's OPEN). */
  readonly readyState: number;
  close(code: number, reason: string): void;
  once(event: "close", listener: () => void): unknown;
}

const OPEN = 1;

export interface SocketCredentialsOptions {
  authenticator: Authenticator;
  /** Close code and reason for a socket whose credential stopped working. */
  closeCode: number;
  closeReason: string;
  intervalMs: number;
  log: Logger;
}

export class SocketCredentials {
  readonly #sockets = new Map<WatchedSocket, unknown>();
  readonly #timer: NodeJS.Timeout;
  #sweeping = false;

  constructor(private readonly opts: SocketCredentialsOptions) {
    this.#timer = setInterval(() => void this.sweep(), opts.intervalMs);
    this.#timer.unref();
  }

  /** Watches `socket`, connected with `authorization`, until it closes. */
  watch(socket: WatchedSocket, authorization: unknown): void {
    // Closed while its credential was being checked: its close event has passed.
    if (socket.readyState !== OPEN) return;
    this.#sockets.set(socket, authorization);
    socket.once("close", () => this.#sockets.delete(socket));
  }

  /** Closes every socket whose credential no longer authenticates. A sweep still running is not doubled. */
  async sweep(): Promise<void> {
    if (this.#sweeping) return;
    this.#sweeping = true;
    try {
      for (const [socket, authorization] of [...this.#sockets]) {
        if (!(await this.#stillValid(authorization))) {
          this.#sockets.delete(socket);
          socket.close(this.opts.closeCode, this.opts.closeReason);
        }
      }
    } finally {
      this.#sweeping = false;
    }
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#sockets.clear();
  }

  async #stillValid(authorization: unknown): Promise<boolean> {
    try {
      return (await this.opts.authenticator.principalFor(authorization)).kind !== "anonymous";
    } catch (error: unknown) {
      // Postgres unreachable says nothing about the key: keep the socket, look again next sweep.
      this.opts.log.warn({ err: error }, "could not re-check a WebSocket's credential");
      return true;
    }
  }
}
