/**
 * How much a WebSocket may have waiting to be sent before the gateway gives
 * up on its reader, as Redis's client-output-buffer-limit does for pub/sub
 * clients: past SOCKET_OUTPUT_BYTES on one socket, or past
 * TENANT_OUTPUT_BYTES on a tenant's sockets together (the largest of them
 * goes), the socket is closed with WS_SLOW_CONSUMER (1013, "Try Again
 * Later": graphql-ws clients reconnect on it) and a reason saying why, and
 * destroyed CLOSE_GRACE_MS later if its reader has not taken the close by
 * then: the data waiting is what must go.
 *
 * Why: graphql-ws sends each operation's next message once its previous one
 * left, so a socket that is not read holds one message per operation (up to
 * 100 operations, each message up to a 4 MiB answer), and a tenant's 100
 * sockets a hundred times that, outside the heap, until keep-alive ends the
 * socket (12-24 s). Checked before each message of an operation is sent: a
 * socket at or under the limits pays one number read.
 */

/** Bytes one socket may have waiting before it is closed (the largest answer is ~4 MiB of bodies). */
export const SOCKET_OUTPUT_BYTES = 8 * 1024 * 1024;
/** Bytes a tenant's sockets on one gateway may have waiting together. */
export const TENANT_OUTPUT_BYTES = 32 * 1024 * 1024;
/** Close code for a socket whose reader fell too far behind: RFC 6455's "Try Again Later". */
export const WS_SLOW_CONSUMER = 1013;
/** How long a closed slow socket may keep its waiting data for the close to reach its reader. */
export const CLOSE_GRACE_MS = 2_000;

/** What the limit needs of a ws WebSocket. */
export interface OutputSocket {
  readonly bufferedAmount: number;
  readonly readyState: number;
  close(code: number, reason: string): void;
  terminate(): void;
}

export type OutputLimitKind = "socket" | "tenant";

export interface SocketOutputLimitOptions {
  socketBytes?: number;
  tenantBytes?: number;
  graceMs?: number;
  /** Called once per socket closed, with the limit it passed and the bytes it had waiting. */
  onClose?(kind: OutputLimitKind, bufferedBytes: number): void;
}

const OPEN = 1;

export class SocketOutputLimit {
  readonly #socketBytes: number;
  readonly #tenantBytes: number;
  readonly #graceMs: number;

  constructor(private readonly opts: SocketOutputLimitOptions = {}) {
    this.#socketBytes = opts.socketBytes ?? SOCKET_OUTPUT_BYTES;
    this.#tenantBytes = opts.tenantBytes ?? TENANT_OUTPUT_BYTES;
    this.#graceMs = opts.graceMs ?? CLOSE_GRACE_MS;
  }

  /**
   * Before a message goes out on `socket`: closes it when it, or its tenant's
   * sockets together (`peers`, itself included, read only when it has more
   * than a sixteenth of the socket limit waiting), passed their limit. True
   * when `socket` was closed (its message is not worth building).
   */
  check(socket: OutputSocket, peers: () => Iterable<OutputSocket>): boolean {
    const buffered = socket.bufferedAmount;
    if (buffered <= this.#socketBytes / 16 || socket.readyState !== OPEN) return socket.readyState !== OPEN;
    if (buffered > this.#socketBytes) {
      this.#close(socket, "socket", `Slow consumer: more than ${this.#socketBytes / 1024 / 1024} MiB waiting to be sent on this connection`);
      return true;
    }
    let total = 0;
    let largest: OutputSocket = socket;
    for (const peer of peers()) {
      if (peer.readyState !== OPEN) continue;
      total += peer.bufferedAmount;
      if (peer.bufferedAmount > largest.bufferedAmount) largest = peer;
    }
    if (total <= this.#tenantBytes) return false;
    this.#close(largest, "tenant", `Slow consumer: more than ${this.#tenantBytes / 1024 / 1024} MiB waiting to be sent on this tenant's connections`);
    return largest === socket;
  }

  #close(socket: OutputSocket, kind: OutputLimitKind, reason: string): void {
    this.opts.onClose?.(kind, socket.bufferedAmount);
    socket.close(WS_SLOW_CONSUMER, reason);
    setTimeout(() => socket.terminate(), this.#graceMs).unref();
  }
}
