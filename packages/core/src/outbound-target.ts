/**
 * SSRF policy for outbound requests (PUSH endpoints, callbacks, webhooks),
 * the pure half: URL shape and IP-literal checks. The I/O half resolves the
 * host name and runs every resolved address through isPrivateAddress before
 * connecting (and pins the connection to that address, defeating DNS rebinding).
 */
import { BlockList, isIP } from "node:net";
import { MAX_URL_LENGTH } from "./limits.js";

/**
 * IPv4 ranges a tenant's target may not be in: not globally reachable, or
 * reaching into our own network. After IANA's special-purpose registry
 * (RFC 6890 and successors).
 */
const PRIVATE_V4: readonly (readonly [string, number])[] = [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8], // RFC 1918
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local, includes cloud metadata 169.254.169.254
  ["172.16.0.0", 12], // RFC 1918
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation (TEST-NET-1)
  ["192.88.99.0", 24], // 6to4 relay anycast (deprecated)
  ["192.168.0.0", 16], // RFC 1918
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation (TEST-NET-2)
  ["203.0.113.0", 24], // documentation (TEST-NET-3)
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, includes broadcast 255.255.255.255
];

/**
 * IPv6 ranges refused outright. ::/8 covers the unspecified and loopback
 * addresses, IPv4-compatible ::/96 and IPv4-translated ::ffff:0:0:0/96;
 * IPv4-mapped ::ffff:0:0/96 and NAT64's 64:ff9b::/96 are inside it too but
 * are judged by the IPv4 address they carry instead (isPrivateV6).
 */
const PRIVATE_V6: readonly (readonly [string, number])[] = [
  ["::", 8], // reserved by the IETF (see above)
  ["64:ff9b:1::", 48], // local-use NAT64: translates into the operator's own network
  ["100::", 64], // discard-only
  ["2001::", 23], // IETF protocol assignments: Teredo 2001::/32, benchmarking, ORCHID
  ["2001:db8::", 32], // documentation
  ["3fff::", 20], // documentation (RFC 9637)
  ["5f00::", 16], // SRv6 segment identifiers
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated, still routed inside some networks)
  ["ff00::", 8], // multicast
];

/** IPv4 rules also match IPv4-mapped IPv6 addresses (::ffff:127.0.0.1), as Node documents for BlockList. */
const privateV4 = new BlockList();
for (const [net, prefix] of PRIVATE_V4) privateV4.addSubnet(net, prefix, "ipv4");

const privateV6 = new BlockList();
for (const [net, prefix] of PRIVATE_V6) privateV6.addSubnet(net, prefix, "ipv6");

const ipv4Mapped = new BlockList();
ipv4Mapped.addSubnet("::ffff:0:0", 96, "ipv6");

/** "a.b.c.d" as the two hex groups an IPv6 address embeds it in. */
function v4Groups(v4: string): string {
  const [a = 0, b = 0, c = 0, d = 0] = v4.split(".").map(Number);
  return `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

/**
 * Public IPv6 prefixes that carry an IPv4 address and reach it: the
 * well-known NAT64 prefix 64:ff9b::/96 (the IPv4 address in the last 32 bits)
 * and 6to4 2002::/16 (in bits 16-47). An address there is refused when the
 * IPv4 address it embeds is, so the rules are each IPv4 range moved into the
 * prefix; with a public IPv4 address inside they are as public as it.
 */
const embedsV4 = new BlockList();
embedsV4.addSubnet("64:ff9b::", 96, "ipv6");
embedsV4.addSubnet("2002::", 16, "ipv6");
const privateEmbedded = new BlockList();
for (const [net, prefix] of PRIVATE_V4) {
  privateEmbedded.addSubnet(`64:ff9b::${net}`, 96 + prefix, "ipv6");
  privateEmbedded.addSubnet(`2002:${v4Groups(net)}::`, 16 + prefix, "ipv6");
}

function isPrivateV6(ip: string): boolean {
  if (ipv4Mapped.check(ip, "ipv6")) return privateV4.check(ip, "ipv6");
  if (embedsV4.check(ip, "ipv6")) return privateEmbedded.check(ip, "ipv6");
  return privateV6.check(ip, "ipv6");
}

/**
 * Whether connecting to `ip` could reach something inside our network, or
 * an address that is not globally reachable. The gateway's registration
 * check and the fleet's connect-time lookup both ask this, so they refuse the
 * same addresses. Fails closed: a string that is not an IP address counts
 * as private.
 */
export function isPrivateAddress(ip: string): boolean {
  const bare = ip.startsWith("[") && ip.endsWith("]") ? ip.slice(1, -1) : ip;
  const noZone = bare.split("%")[0] ?? "";
  switch (isIP(noZone)) {
    case 4:
      return privateV4.check(noZone, "ipv4");
    case 6:
      return isPrivateV6(noZone);
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
