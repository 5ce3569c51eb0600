/**
 * SSRF policy for outbound requests (PUSH endpoints, callbacks, webhooks),
 * the pure half: URL shape and IP-literal checks. The I/O half resolves the
 * host name and runs every resolved address through isPrivateAddress before
 * connecting (and pins the connection to that address, defeating DNS rebinding).
 */
import { BlockList, isIP } from "node:net";
import { MAX_URL_LENGTH } from "./limits.js";

const privateV4 = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8], // RFC 1918
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local, includes cloud metadata 169.254.169.254
  ["172.16.0.0", 12], // RFC 1918
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.168.0.0", 16], // RFC 1918
  ["198.18.0.0", 15], // benchmarking
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, includes broadcast 255.255.255.255
] as const) {
  privateV4.addSubnet(net, prefix, "ipv4");
}

const privateV6 = new BlockList();
privateV6.addAddress("::", "ipv6"); // unspecified
privateV6.addAddress("::1", "ipv6"); // loopback
privateV6.addSubnet("fc00::", 7, "ipv6"); // unique local
privateV6.addSubnet("fe80::", 10, "ipv6"); // link-local
privateV6.addSubnet("ff00::", 8, "ipv6"); // multicast

/** The 16 bytes of an IPv6 address already accepted by isIP (no zone id). */
function ipv6Bytes(ip: string): number[] {
  let text = ip;
  const tail: number[] = [];
  const lastColon = text.lastIndexOf(":");
  if (text.includes(".", lastColon)) {
    // Trailing dotted IPv4 ("::ffff:127.0.0.1") stands for the last two groups.
    tail.push(...text.slice(lastColon + 1).split(".").map(Number));
    text = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const [head = "", rest] = text.split("::");
  const headGroups = head === "" ? [] : head.split(":");
  const restGroups = rest === undefined || rest === "" ? [] : rest.split(":");
  const missing = 8 - headGroups.length - restGroups.length;
  const groups = [...headGroups, ...Array<string>(Math.max(missing, 0)).fill("0"), ...restGroups];
  const bytes = groups.flatMap((g) => {
    const n = parseInt(g, 16);
    return [n >> 8, n & 0xff];
  });
  if (tail.length === 4) bytes.splice(12, 4, ...tail);
  return bytes;
}

/** IPv4 embedded by IPv4-mapped (::ffff:0:0/96) or NAT64 (64:ff9b::/96) addresses, else null. */
function embeddedIpv4(ip: string): string | null {
  const b = ipv6Bytes(ip);
  const first10Zero = b.slice(0, 10).every((x) => x === 0);
  const mapped = first10Zero && b[10] === 0xff && b[11] === 0xff;
  const nat64 = b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && b.slice(4, 12).every((x) => x === 0);
  return mapped || nat64 ? b.slice(12).join(".") : null;
}

/**
 * Whether connecting to `ip` could reach something inside our network.
 * Fails closed: a string that is not an IP address counts as private.
 */
export function isPrivateAddress(ip: string): boolean {
  const bare = ip.startsWith("[") && ip.endsWith("]") ? ip.slice(1, -1) : ip;
  const noZone = bare.split("%")[0] ?? "";
  switch (isIP(noZone)) {
    case 4:
      return privateV4.check(noZone, "ipv4");
    case 6: {
      const v4 = embeddedIpv4(noZone);
      if (v4 !== null) return privateV4.check(v4, "ipv4");
      return privateV6.check(noZone, "ipv6");
    }
    default:
      return true;
  }
}

export type OutboundCheck = { ok: true; url: URL } | { ok: false; reason: string };

const LOCAL_SUFFIXES = [".localhost", ".internal", ".local"];

export function checkOutboundUrl(raw: string, { allowPrivate }: { allowPrivate: boolean }): OutboundCheck {
  if (raw.length > MAX_URL_LENGTH) return { ok: false, reason: `URL longer than ${MAX_URL_LENGTH} characters` };
  let url: URL;
  try {
    // WHATWG parsing normalises numeric hosts (2130706433, 0177.0.0.1, 0x7f.1)
    // to dotted IPv4, so the checks below see the address actually dialled.
    url = new URL(raw);
  } catch {
    return { ok: false, reason: "not a valid URL" };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return { ok: false, reason: "only http and https are allowed" };
  // Credentials in URLs end up in logs and proxies; they belong in headers.
  if (url.username !== "" || url.password !== "") return { ok: false, reason: "credentials in the URL are not allowed" };
  if (allowPrivate) return { ok: true, url };

  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  if (isIP(host) !== 0) {
    return isPrivateAddress(host) ? { ok: false, reason: "private or reserved address" } : { ok: true, url };
  }
  const name = host.replace(/\.$/, "").toLowerCase();
  if (name === "localhost" || LOCAL_SUFFIXES.some((s) => name.endsWith(s))) {
    return { ok: false, reason: "local host name" };
  }
  return { ok: true, url };
}
