import { afterEach, describe, expect, it, vi } from "vitest";
import { SocketOutputLimit, WS_SLOW_CONSUMER, type OutputLimitKind, type OutputSocket } from "./socket-output-limit.js";

const MIB = 1024 * 1024;

function socket(bufferedAmount: number) {
  const s = {
    bufferedAmount,
    readyState: 1,
    closed: null as { code: number; reason: string } | null,
    terminated: false,
    close(code: number, reason: string) {
      s.closed = { code, reason };
      s.readyState = 2;
    },
    terminate() {
      s.terminated = true;
      s.readyState = 3;
    },
  };
  return s satisfies OutputSocket;
}

describe("SocketOutputLimit", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("closes a socket past its bytes with 1013 and a reason, and destroys it after the grace", () => {
    vi.useFakeTimers();
    const closes: Array<[OutputLimitKind, number]> = [];
    const limit = new SocketOutputLimit({ socketBytes: 8 * MIB, graceMs: 2_000, onClose: (kind, bytes) => closes.push([kind, bytes]) });
    const ok = socket(8 * MIB);
    const slow = socket(8 * MIB + 1);
    expect(limit.check(ok, () => [ok])).toBe(false);
    expect(limit.check(slow, () => [slow])).toBe(true);
    expect(slow.closed).toEqual({ code: WS_SLOW_CONSUMER, reason: expect.stringContaining("more than 8 MiB waiting") });
    expect(closes).toEqual([["socket", 8 * MIB + 1]]);
    expect(slow.terminated).toBe(false);
    vi.advanceTimersByTime(2_000);
    expect(slow.terminated).toBe(true);
    // A closed socket is never written to again.
    expect(limit.check(slow, () => [slow])).toBe(true);
  });

  it("past the tenant's bytes closes the tenant's largest socket, and reads its peers only past a sixteenth of the socket limit", () => {
    const limit = new SocketOutputLimit({ socketBytes: 8 * MIB, tenantBytes: 20 * MIB, graceMs: 10 });
    const peersRead = vi.fn(() => [] as OutputSocket[]);
    expect(limit.check(socket(MIB / 2), peersRead)).toBe(false);
    expect(peersRead).not.toHaveBeenCalled();
    const sending = socket(6 * MIB);
    const largest = socket(7 * MIB);
    const other = socket(5 * MIB);
    expect(limit.check(sending, () => [sending, other])).toBe(false);
    // 18 MiB, then 25 MiB together: the largest goes, and the one sending carries on.
    expect(limit.check(sending, () => [sending, largest, other, socket(7 * MIB - 1)])).toBe(false);
    expect(largest.closed?.reason).toContain("tenant's connections");
    expect(sending.closed).toBeNull();
  });
});
