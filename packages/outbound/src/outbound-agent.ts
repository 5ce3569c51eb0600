import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import type { LookupFunction } from "node:net";
import { isPrivateAddress } from "@tasklane/core";
import { Agent } from "undici";

export class PrivateTargetError extends Error {
  constructor(host: string, address: string) {
    super(`Refused to connect to ${host}: it resolves to a private address (${address})`);
    this.name = "PrivateTargetError";
  }
}

/**
 * A DNS lookup that refuses private, loopback and link-local answers. It runs
 * at connect time, so a hostname that was public when the webhook was
 * registered and now points inside (DNS rebinding) is still refused. IP
 * literals never reach a lookup; checkOutboundUrl refuses those before the request.
 */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, "", 0);
      const list = Array.isArray(addresses) ? addresses : [];
      if (!allowPrivate) {
        const bad = list.find((a) => isPrivateAddress(a.address));
        if (bad) return callback(new PrivateTargetError(hostname, bad.address), "", 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      const first = list[0];
      if (!first) return callback(new Error(`No address for ${hostname}`), "", 0);
      callback(null, first.address, first.family);
    });
  };
}

/**
 * One connection pool for outbound calls (PUSH attempts, webhook deliveries);
 * undici's request() never follows redirects. Every caller bounds its request
 * with its signal: a PUSH attempt by its task's timeoutSeconds (up to a day), a
 * webhook delivery by its 10 s. undici's own headers and body timeouts (300 s
 * each by default) are off, so they neither end a longer attempt early as a
 * network error nor make a timer anew twice per request (switching between a
 * request's timeout and the idle connection's keep-alive) for nothing.
 */
export function createOutboundAgent(allowPrivate: boolean, connectTimeoutMs: number, connections = 64): Agent {
  return new Agent({
    connections,
    connect: { lookup: guardedLookup(allowPrivate), timeout: connectTimeoutMs },
    keepAliveTimeout: 10_000,
    headersTimeout: 0,
    bodyTimeout: 0,
  });
}
