/**
 * Edge check of a tenant-supplied target URL (PUSH endpoints; later webhooks).
 * Core's checkOutboundUrl refuses private IP literals and local names; here we
 * also resolve the name once, so `internal.example.com → 10.0.0.5` is refused
 * at configuration time. The fleet checks again at connect time (DNS can
 * change), so a name that does not resolve *now* is accepted, not refused.
 */
import { lookup } from "node:dns/promises";
import { BadUserInputError, checkOutboundUrl, isPrivateAddress } from "@tasklane/core";
import { isIP } from "node:net";

const DNS_TIMEOUT_MS = 2_000;

export type HostResolver = (host: string) => Promise<string[]>;

export const systemResolver: HostResolver = async (host) => {
  const addresses = await lookup(host, { all: true, verbatim: true });
  return addresses.map((a) => a.address);
};

async function resolveWithin(resolver: HostResolver, host: string): Promise<string[] | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), DNS_TIMEOUT_MS);
  });
  try {
    return await Promise.race([resolver(host), timeout]);
  } catch {
    // NXDOMAIN, SERVFAIL, no network: not our call to make here (see header).
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/** Throws BAD_USER_INPUT naming `field` when the URL may not be targeted. */
export async function assertOutboundUrl(
  raw: string,
  field: string,
  opts: { allowPrivate: boolean; resolver?: HostResolver },
): Promise<void> {
  const checked = checkOutboundUrl(raw, { allowPrivate: opts.allowPrivate });
  if (!checked.ok) throw new BadUserInputError(`${field} refused: ${checked.reason}`, [{ path: field, message: checked.reason }]);
  if (opts.allowPrivate) return;
  const host = checked.url.hostname.replace(/^\[|\]$/g, "");
  if (isIP(host) !== 0) return; // literals were already judged by checkOutboundUrl
  const addresses = await resolveWithin(opts.resolver ?? systemResolver, host);
  if (addresses?.some(isPrivateAddress) === true) {
    const reason = "host name resolves to a private or reserved address";
    throw new BadUserInputError(`${field} refused: ${reason}`, [{ path: field, message: reason }]);
  }
}
