/**
 * Progress lines on stderr (stdout stays for the final table), e.g.
 * `[bench 02:13] s1 throughput · Tasklane PUSH · run 2/3 · 12,000/20,000 done · 3,120/s`.
 */
const startedAt = Date.now();

const clock = () => {
  const s = Math.floor((Date.now() - startedAt) / 1000);
  return `${String(Math.floor(s / 60)).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}`;
};

// One formatter per precision: toLocaleString builds a new Intl.NumberFormat on
// every call (~0.1 ms here), and progress lines are formatted once per
// submission call, inside the measured window, in the load generator.
const formatters = new Map<number, Intl.NumberFormat>();

export const fmt = (n: number, digits = 0): string => {
  if (!Number.isFinite(n)) return "n/a";
  let f = formatters.get(digits);
  if (!f) formatters.set(digits, (f = new Intl.NumberFormat("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })));
  return f.format(n);
};

export function log(...parts: (string | undefined)[]): void {
  process.stderr.write(`[bench ${clock()}] ${parts.filter((p) => p !== undefined && p !== "").join(" · ")}\n`);
}

/** Prints at most once per `everyMs`, plus whenever `force` is set. */
export class Ticker {
  private last = 0;

  constructor(
    private readonly scope: string,
    private readonly everyMs = 1000,
  ) {}

  tick(message: string, force = false): void {
    const t = Date.now();
    if (!force && t - this.last < this.everyMs) return;
    this.last = t;
    log(this.scope, message);
  }
}

export const elapsedSinceStart = (): number => Date.now() - startedAt;
