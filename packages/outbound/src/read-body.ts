import type { Readable } from "node:stream";

/**
 * Reads at most `limit` bytes of a receiver's answer and drops the rest. Only
 * a snippet ends up in last_error, so a huge (or endless) body must cost
 * neither memory nor the delivery's time; destroying the stream closes that
 * connection instead of draining it.
 */
export async function readCappedBody(body: Readable & AsyncIterable<Buffer>, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const room = limit - size;
    if (chunk.length >= room) {
      chunks.push(chunk.subarray(0, room));
      body.destroy();
      break;
    }
    chunks.push(chunk);
    size += chunk.length;
  }
  return Buffer.concat(chunks).toString("utf8");
}


export class BodyTooLargeError extends Error {
  constructor(limit: number) {
    super(`Response body exceeds ${limit} bytes`);
    this.name = "BodyTooLargeError";
  }
}

/** Reads at most `limit` bytes; a larger body is an error, not a silent truncation. */
export async function readBoundedBody(body: Readable & AsyncIterable<Buffer>, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      throw new BodyTooLargeError(limit);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}
