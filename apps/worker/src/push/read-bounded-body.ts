import type { Readable } from "node:stream";

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
