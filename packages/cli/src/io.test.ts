import { mkdtemp, rm, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileTooLarge, processIo, readAtMost } from "./io.js";

describe("reading --file with a bound", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "tasklane-cli-io-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("a file larger than the bound is refused by its size, before it is read", async () => {
    const big = path.join(dir, "big.ndjson");
    await writeFile(big, "");
    await truncate(big, 5_000); // sparse: no bytes written
    const refusal = await processIo().readText(big, 4_096).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(FileTooLarge);
    expect(refusal).toMatchObject({ bytes: 5_000, maxBytes: 4_096 });

    const small = path.join(dir, "small.ndjson");
    await writeFile(small, '{"type":"a"}\n');
    expect(await processIo().readText(small, 4_096)).toBe('{"type":"a"}\n');
  });

  it("standard input stops being read once past the bound", async () => {
    let pulled = 0;
    const endless = Readable.from(
      (function* () {
        for (;;) yield Buffer.alloc(1_024, (pulled++, 0x61));
      })(),
    );
    await expect(readAtMost(endless, 10_000)).rejects.toBeInstanceOf(FileTooLarge);
    expect(pulled).toBeLessThan(20);
    expect(await readAtMost(Readable.from([Buffer.from("ab"), "c"]), 3)).toBe("abc");
  });
});
