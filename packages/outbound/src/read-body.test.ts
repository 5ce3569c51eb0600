import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { readCappedBody } from "./read-body.js";

describe("readCappedBody", () => {
  it("returns a small body whole", async () => {
    expect(await readCappedBody(Readable.from([Buffer.from("ab"), Buffer.from("cd")]), 10)).toBe("abcd");
  });

  it("keeps the first `limit` bytes and stops reading", async () => {
    let produced = 0;
    const endless = new Readable({
      read() {
        produced += 1024;
        this.push(Buffer.alloc(1024, 0x61));
      },
    });
    const text = await readCappedBody(endless, 4000);
    expect(text.length).toBe(4000);
    expect(produced).toBeLessThan(64 * 1024);
    expect(endless.destroyed).toBe(true);
  });
});
