import { describe, expect, it } from "vitest";
import { checkOutboundUrl, isPrivateAddress } from "./outbound-target.js";

describe("isPrivateAddress", () => {
  it.each([
    "0.0.0.0",
    "0.1.2.3",
    "10.0.0.1",
    "100.64.0.1",
    "100.127.255.255",
    "127.0.0.1",
    "127.255.255.254",
    "169.254.169.254",
    "172.16.0.1",
    "172.31.255.255",
    "192.0.0.8",
    "192.168.1.1",
    "198.18.0.1",
    "198.19.255.255",
    "224.0.0.1",
    "239.255.255.250",
    "240.0.0.1",
    "255.255.255.255",
    "::",
    "::1",
    "fc00::1",
    "fdff::1",
    "fe80::1",
    "fe80::1%eth0",
    "febf::1",
    "ff02::1",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::ffff:10.0.0.1",
    "::ffff:a9fe:a9fe",
    "64:ff9b::127.0.0.1",
    "64:ff9b::a00:1",
    "[::1]",
    // Documentation, 6to4 relay, and the edges of the reserved IPv4 ranges.
    "192.0.2.1",
    "198.51.100.7",
    "203.0.113.255",
    "192.88.99.1",
    "100.127.0.1",
    "198.18.255.1",
    "239.0.0.1",
    "240.0.0.0",
    "0.255.255.255",
    // IPv4-compatible ::/96 (deprecated) and IPv4-translated ::ffff:0:0:0/96.
    "::127.0.0.1",
    "::7f00:1",
    "::8.8.8.8",
    "::ffff:0:7f00:1",
    "::ffff:0:808:808",
    // The rest of ::/8.
    "::1:0:0:1",
    "0:0:0:1::1",
    // Local-use NAT64 translates into the operator's own network, whatever it embeds.
    "64:ff9b:1::7f00:1",
    "64:ff9b:1::808:808",
    // 6to4 embedding a private or reserved IPv4 address.
    "2002:7f00:1::1",
    "2002:a00:1::1",
    "2002:a9fe:a9fe::1",
    "2002:c000:201::1",
    // NAT64 (well-known prefix) embedding a documentation address.
    "64:ff9b::192.0.2.1",
    "::ffff:192.0.2.1",
    "::ffff:203.0.113.1",
    "100::1",
    "2001::1",
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",
    "2001:2::1",
    "2001:db8::1",
    "2001:db8:ffff::1",
    "3fff::1",
    "5f00::1",
    "fec0::1",
    "feff::1",
    "ff05::2",
    "not-an-ip",
    "",
  ])("%s is private", (ip) => {
    expect(isPrivateAddress(ip)).toBe(true);
  });

  it.each([
    "93.184.216.34",
    "8.8.8.8",
    "1.1.1.1",
    "100.63.255.255",
    "100.128.0.0",
    "172.15.255.255",
    "172.32.0.0",
    "198.17.255.255",
    "198.20.0.0",
    "223.255.255.255",
    "2606:2800:220:1:248:1893:25c8:1946",
    "2001:4860:4860::8888",
    "::ffff:93.184.216.34",
    "::ffff:5db8:d822",
    "64:ff9b::8.8.8.8",
    "64:ff9b::808:808",
    // 6to4 embedding a public IPv4 address reaches that address.
    "2002:808:808::1",
    "2001:200::1",
    "2001:db7:ffff::1",
    "2001:db9::1",
    "2400:cb00:2048:1::c629:d7a2",
    "192.0.1.255",
    "192.0.3.0",
    "198.51.99.255",
    "198.51.101.0",
    "203.0.112.255",
    "203.0.114.0",
    "223.255.255.254",
  ])("%s is public", (ip) => {
    expect(isPrivateAddress(ip)).toBe(false);
  });
});

describe("checkOutboundUrl", () => {
  const privateTargets = [
    "http://127.0.0.1/hook",
    "http://localhost:8080/",
    "http://LOCALHOST./",
    "http://api.localhost/",
    "http://metadata.google.internal/",
    "http://printer.local/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://2130706433/",
    "http://0177.0.0.1/",
    "http://0x7f.1/",
    "http://0.0.0.0/",
    "http://10.1.2.3/",
    "http://172.16.0.1/",
    "http://192.168.1.1/",
    "http://169.254.169.254/latest/meta-data/",
    "https://[fc00::1]/",
    "https://[fe80::1]/",
    // Found by QA: IPv6 forms of loopback and reserved ranges.
    "http://[::127.0.0.1]/",
    "http://[::7f00:1]/",
    "http://[::ffff:0:7f00:1]/",
    "http://[64:ff9b:1::7f00:1]/",
    "http://[2002:7f00:1::1]/",
    "http://[fec0::1]/",
    "http://[::]/",
    "http://[0:0:0:0:0:0:0:1]/",
    "http://[2001::1]/",
    "http://[2001:db8::1]/",
    "http://192.0.2.1/",
    "http://198.51.100.1/",
    "http://203.0.113.1/",
    "http://100.64.0.1/",
    "http://198.18.0.1/",
    "http://240.0.0.1/",
    "http://224.0.0.1/",
    "http://0/",
  ];

  it.each(privateTargets)("%s is refused when private targets are not allowed", (raw) => {
    expect(checkOutboundUrl(raw, { allowPrivate: false }).ok).toBe(false);
  });

  it.each(privateTargets)("%s is accepted when private targets are allowed", (raw) => {
    expect(checkOutboundUrl(raw, { allowPrivate: true }).ok).toBe(true);
  });

  it("WHATWG parsing normalises numeric IPv4 forms to dotted loopback", () => {
    for (const raw of ["http://2130706433/", "http://0177.0.0.1/", "http://0x7f.1/"]) {
      const r = checkOutboundUrl(raw, { allowPrivate: true });
      expect(r.ok && r.url.hostname).toBe("127.0.0.1");
    }
  });

  it.each(["ftp://example.com/", "file:///etc/passwd", "gopher://example.com/", "javascript:alert(1)", "not a url", "//example.com/x"])(
    "%s is refused regardless of allowPrivate",
    (raw) => {
      expect(checkOutboundUrl(raw, { allowPrivate: false }).ok).toBe(false);
      expect(checkOutboundUrl(raw, { allowPrivate: true }).ok).toBe(false);
    },
  );

  it("refuses credentials in the URL", () => {
    expect(checkOutboundUrl("https://user:pw@example.com/", { allowPrivate: true })).toEqual({
      ok: false,
      reason: "credentials in the URL are not allowed",
    });
  });

  it("refuses URLs over MAX_URL_LENGTH", () => {
    const base = "https://example.com/";
    expect(checkOutboundUrl(base + "a".repeat(2048 - base.length), { allowPrivate: false }).ok).toBe(true);
    expect(checkOutboundUrl(base + "a".repeat(2049 - base.length), { allowPrivate: false }).ok).toBe(false);
  });

  it("accepts public addresses and names", () => {
    for (const raw of ["http://93.184.216.34/", "https://example.com:8443/hook?x=1", "https://[2606:2800:220:1:248:1893:25c8:1946]/", "https://localhost.example.com/"]) {
      const r = checkOutboundUrl(raw, { allowPrivate: false });
      expect(r.ok, raw).toBe(true);
    }
    const r = checkOutboundUrl("https://Example.COM/a", { allowPrivate: false });
    expect(r.ok && r.url.hostname).toBe("example.com");
  });
});
