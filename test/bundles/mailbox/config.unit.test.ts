// A mount's IMAP account and transport (R-MAIL-1, R-MAIL-6): its own <SLUG>__ variables only; implicit TLS or
// STARTTLS, plain only to a loopback host; `npm run deploy:check` refuses a plaintext or loopback IMAP setting.
import { describe, expect, it } from "vitest";
import { accountFor, checkTransport } from "../../../bundles/mailbox/mailbox.config";
import { varProblems } from "../../../scripts/deploy-check";

const base = { MAILBOX__IMAP_HOST: "imap.example.com", MAILBOX__IMAP_USER: "ann", MAILBOX__IMAP_PASSWORD: "pw-0123456789" };

describe("a mount's account", () => {
  it("defaults to implicit TLS on 993, and to STARTTLS on 143", () => {
    expect(accountFor("mailbox", base)).toEqual({ ok: true, account: { host: "imap.example.com", port: 993, user: "ann", password: "pw-0123456789", security: "tls" } });
    expect(accountFor("mailbox", { ...base, MAILBOX__IMAP_PORT: "143" })).toMatchObject({ ok: true, account: { port: 143, security: "starttls" } });
  });

  it("reads only its own namespace: another slug's or the bare variables are not its account", () => {
    const other = {
      MAILBOX_TOKEN__IMAP_HOST: "imap.example.com",
      MAILBOX_TOKEN__IMAP_USER: "bob",
      MAILBOX_TOKEN__IMAP_PASSWORD: "x",
      IMAP_HOST: "imap.example.com",
      IMAP_USER: "c",
      IMAP_PASSWORD: "y",
    };
    const r = accountFor("mailbox", other);
    expect(r).toEqual({ ok: false, reason: "this mount's IMAP account is not configured: MAILBOX__IMAP_HOST, MAILBOX__IMAP_USER, MAILBOX__IMAP_PASSWORD not set" });
  });

  it.each(["imap.example.com", "10.0.0.5", "128.0.0.1", "localhost.example.com"])("refuses plain IMAP to %s, naming the variable and never the password", (host) => {
    const r = accountFor("mailbox", { ...base, MAILBOX__IMAP_HOST: host, MAILBOX__IMAP_SECURITY: "plain" });
    expect(r.ok).toBe(false);
    expect(JSON.stringify(r)).toContain('MAILBOX__IMAP_SECURITY is \\"plain\\", which is refused for any host but a loopback one');
    expect(JSON.stringify(r)).not.toContain("pw-0123456789");
  });

  it.each(["127.0.0.1", "127.255.0.9", "localhost", "::1", "[::1]"])("allows plain IMAP to the loopback host %s (a developer's machine)", (host) => {
    expect(accountFor("mailbox", { ...base, MAILBOX__IMAP_HOST: host, MAILBOX__IMAP_SECURITY: "plain" }).ok).toBe(true);
  });

  it.each([
    ["0", "not a port number"],
    ["65536", "not a port number"],
    ["99a", "not a port number"],
  ])("refuses port %s", (port, says) => {
    expect(JSON.stringify(checkTransport("imap.example.com", port, undefined))).toContain(says);
  });

  it("accepts ports 1 and 65535, and refuses a security word that is not one of the three", () => {
    expect(checkTransport("imap.example.com", "1", undefined).ok).toBe(true);
    expect(checkTransport("imap.example.com", "65535", "starttls").ok).toBe(true);
    expect(JSON.stringify(checkTransport("imap.example.com", "993", "ssl"))).toContain("IMAP_SECURITY must be one of tls, starttls, plain");
  });

  it("refuses a host with a scheme, a path or credentials", () => {
    for (const host of ["imaps://imap.example.com", "imap.example.com/x", "ann:pw@imap.example.com"]) expect(accountFor("mailbox", { ...base, MAILBOX__IMAP_HOST: host }).ok).toBe(false);
  });
});

describe("deploy:check on IMAP settings", () => {
  const where = "strad-bundle-mailbox (bundles/mailbox/wrangler.toml) [vars]";
  it("fails on a plaintext IMAP setting, in any slug's namespace and any case", () => {
    for (const [name, value] of [
      ["MAILBOX__IMAP_SECURITY", "plain"],
      ["WORK_MAIL__IMAP_SECURITY", "PLAIN"],
      ["IMAP_SECURITY", " plain "],
    ]) {
      expect(varProblems(name as string, value as string, where, new Map(), new Set())).toEqual([
        `${where}: ${name}="plain" sends IMAP passwords and mail in clear text; production uses "tls" or "starttls"`,
      ]);
    }
  });

  it("passes tls and starttls, and fails on a loopback IMAP host", () => {
    expect(varProblems("MAILBOX__IMAP_SECURITY", "tls", where, new Map(), new Set())).toEqual([]);
    expect(varProblems("MAILBOX__IMAP_SECURITY", "starttls", where, new Map(), new Set())).toEqual([]);
    expect(varProblems("MAILBOX__IMAP_HOST", "imap.example.com", where, new Map(), new Set())).toEqual([]);
    expect(varProblems("MAILBOX__IMAP_HOST", "127.0.0.1", where, new Map(), new Set())).toEqual([`${where}: MAILBOX__IMAP_HOST is a loopback host, which is this machine only`]);
  });
});
