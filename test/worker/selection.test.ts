// Covers mount selection and tool naming (worker/selection.ts): ?servers= parsing, entitlement, the prefixing rule, routeTool.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Caller } from "../../worker/auth";
import { type Roster, validateRoster } from "../../worker/roster";
import { exposedName, routeTool, SELECTION_CACHE_SIZE, type Selection, selectionCache, selectServers, serversParam } from "../../worker/selection";

function roster(): Roster {
  const result = validateRoster({
    servers: [
      { slug: "echo", kind: "bundle", bundle: "ECHO", path: "/echo", entitlements: ["user", "reader"] },
      { slug: "echo-confirmed", kind: "bundle", bundle: "ECHO", path: "/echo-confirmed", entitlements: ["user"], confirmations: true },
      { slug: "secret-ops", kind: "bundle", bundle: "OPS", path: "/ops", entitlements: ["ops"] },
      { slug: "remote-demo", kind: "remote-http", url: "https://remote.example/mcp", entitlements: ["user"] },
    ],
  });
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.roster;
}

function caller(kind: Caller["kind"], roles: string[]): Caller {
  return { id: `c-${kind}`, kind, roles, tokenSecret: "T", isAdmin: kind === "admin" };
}

const user = caller("session", ["user"]);
const reader = caller("session", ["reader"]);
const admin = caller("admin", []);

function ok(selection: Selection): Extract<Selection, { ok: true }> {
  if (!selection.ok) throw new Error(`expected a selection, got: ${selection.message}`);
  return selection;
}

const slugs = (s: Extract<Selection, { ok: true }>): string[] => s.servers.map((x) => x.slug);

describe("?servers=", () => {
  it("no parameter selects every entitled server, prefixed when there are several", () => {
    const s = ok(selectServers(roster(), user, null));
    expect(slugs(s)).toEqual(["echo", "echo-confirmed", "remote-demo"]);
    expect(s.prefixed).toBe(true);
  });

  it("no parameter with one entitled server leaves names unprefixed", () => {
    const s = ok(selectServers(roster(), reader, null));
    expect(slugs(s)).toEqual(["echo"]);
    expect(s.prefixed).toBe(false);
  });

  it("a caller entitled to nothing selects nothing and routes nothing", () => {
    const s = ok(selectServers(roster(), caller("session", ["nobody"]), null));
    expect(s.servers).toEqual([]);
    expect(routeTool(s, "echo")).toBeUndefined();
  });

  it("an admin holds every role", () => {
    expect(slugs(ok(selectServers(roster(), admin, null)))).toEqual(["echo", "echo-confirmed", "secret-ops", "remote-demo"]);
    expect(slugs(ok(selectServers(roster(), admin, "secret-ops")))).toEqual(["secret-ops"]);
  });

  it("one named server is selected unprefixed", () => {
    const s = ok(selectServers(roster(), user, "echo-confirmed"));
    expect(slugs(s)).toEqual(["echo-confirmed"]);
    expect(s.prefixed).toBe(false);
  });

  it("several named servers keep the order asked for and are prefixed", () => {
    const s = ok(selectServers(roster(), user, "remote-demo,echo"));
    expect(slugs(s)).toEqual(["remote-demo", "echo"]);
    expect(s.prefixed).toBe(true);
  });

  it("spaces around slugs are ignored and a repeated slug counts once", () => {
    const s = ok(selectServers(roster(), user, " echo , echo"));
    expect(slugs(s)).toEqual(["echo"]);
    expect(s.prefixed).toBe(false);
  });

  it.each(["", "echo,", ",echo", "echo,,remote-demo", " "])("an empty slug in %j is refused", (param) => {
    const s = selectServers(roster(), user, param);
    expect(s).toEqual({ ok: false, message: "?servers= holds an empty slug" });
  });

  it("more than 64 names are refused", () => {
    const s = selectServers(roster(), user, Array.from({ length: 65 }, () => "echo").join(","));
    expect(s).toEqual({ ok: false, message: "?servers= names more than 64 servers" });
  });

  it("an unknown slug and an unentitled slug read the same, so the roster cannot be probed", () => {
    const unknown = selectServers(roster(), user, "no-such-thing");
    const unentitled = selectServers(roster(), user, "secret-ops");
    expect(unknown.ok).toBe(false);
    expect(unentitled.ok).toBe(false);
    if (unknown.ok || unentitled.ok) return;
    expect(unknown.message).toBe('unknown server "no-such-thing" (or not one this caller may use)');
    expect(unentitled.message.replace("secret-ops", "no-such-thing")).toBe(unknown.message);
  });

  it("one bad slug among good ones refuses the whole request and names it", () => {
    const s = selectServers(roster(), reader, "echo,echo-confirmed");
    expect(s).toEqual({ ok: false, message: 'unknown server "echo-confirmed" (or not one this caller may use)' });
  });

  it("a long unknown slug is cut to 64 characters in the message", () => {
    const long = "x".repeat(500);
    const s = selectServers(roster(), user, long);
    expect(s.ok).toBe(false);
    if (!s.ok) {
      expect(s.message).toContain("x".repeat(64));
      expect(s.message).not.toContain("x".repeat(65));
    }
  });
});

describe("tool names", () => {
  it("with one server, names are the upstream names unchanged and route back to it", () => {
    const s = ok(selectServers(roster(), user, "echo"));
    const server = s.servers[0];
    if (server === undefined) throw new Error("no server");
    expect(exposedName(server, "add", s.prefixed)).toBe("add");
    expect(routeTool(s, "add")).toEqual({ server, tool: "add" });
    // Unprefixed, even a name containing the separator belongs to the one server as written.
    expect(routeTool(s, "echo-confirmed__add")).toEqual({ server, tool: "echo-confirmed__add" });
  });

  it("with several servers, two tools of one name never shadow each other", () => {
    const s = ok(selectServers(roster(), user, "echo,echo-confirmed"));
    const [a, b] = s.servers;
    if (a === undefined || b === undefined) throw new Error("no servers");
    const names = [exposedName(a, "add", s.prefixed), exposedName(b, "add", s.prefixed)];
    expect(names).toEqual(["echo__add", "echo-confirmed__add"]);
    expect(routeTool(s, "echo__add")).toEqual({ server: a, tool: "add" });
    expect(routeTool(s, "echo-confirmed__add")).toEqual({ server: b, tool: "add" });
  });

  it("the split is at the first __, so a tool name may itself contain __", () => {
    const s = ok(selectServers(roster(), user, "echo,remote-demo"));
    expect(routeTool(s, "remote-demo__get__item")).toEqual({ server: s.servers[1], tool: "get__item" });
  });

  it.each(["add", "__add", "unknown__add", "secret-ops__add", "echo-confirmed__add"])("%s routes nowhere when prefixed", (name) => {
    const s = ok(selectServers(roster(), user, "echo,remote-demo"));
    expect(routeTool(s, name)).toBeUndefined();
  });
});

describe("the selection cache of a gateway isolate", () => {
  it("hands each caller its own selection for a ?servers= value, the same as selectServers, and frozen", () => {
    const select = selectionCache(roster());
    for (const [who, param] of [
      [user, null],
      [reader, null],
      [admin, null],
      [user, "echo,echo-confirmed"],
      [reader, "echo,echo-confirmed"],
      [user, " echo "],
      [reader, "secret-ops"],
    ] as const) {
      const cached = select(who, param);
      expect(cached).toEqual(selectServers(roster(), who, param));
      // The second ask is the very same object, and nothing can change it for the next request.
      expect(select(who, param)).toBe(cached);
      expect(Object.isFrozen(cached)).toBe(true);
      if (cached.ok) {
        expect(Object.isFrozen(cached.servers)).toBe(true);
        expect(() => (cached.servers as unknown as string[]).push("x")).toThrow(TypeError);
      }
    }
    // One caller's selection is never another's: the same value names different mounts for a user and a reader.
    expect(slugs(ok(select(user, null)))).toEqual(["echo", "echo-confirmed", "remote-demo"]);
    expect(slugs(ok(select(reader, null)))).toEqual(["echo"]);
    expect(select(reader, "echo,echo-confirmed").ok).toBe(false);
  });

  it("stays bounded when a caller names endless distinct values, and still answers each correctly", () => {
    const select = selectionCache(roster());
    const first = select(user, "echo");
    for (let i = 0; i < SELECTION_CACHE_SIZE * 3; i++) {
      const param = i % 2 === 0 ? `echo,${"echo,".repeat(i % 5)}echo` : `nope-${i}`;
      expect(select(user, param)).toEqual(selectServers(roster(), user, param));
    }
    // The cache started over on the way: the first selection was built anew, equal but not the same object.
    const again = select(user, "echo");
    expect(again).toEqual(first);
    expect(again).not.toBe(first);
  });
});

describe("serversParam: the ?servers= value as the URL parser reads it", () => {
  const parsed = (url: string) => new URL(url).searchParams.get("servers");

  it("agrees with new URL(url).searchParams.get on the edges", () => {
    const urls = [
      "https://gw.example/mcp",
      "https://gw.example/mcp?",
      "https://gw.example/mcp?servers",
      "https://gw.example/mcp?servers=",
      "https://gw.example/mcp?servers=echo",
      "https://gw.example/mcp?servers=echo,gmail&servers=pads",
      "https://gw.example/mcp?x=1&&servers=a=b&",
      "https://gw.example/mcp?serversx=1&xservers=2",
      "https://gw.example/mcp?a=1?servers=b",
      "https://gw.example/mcp?servers=a+b",
      "https://gw.example/mcp?servers=a%2Cb",
      "https://gw.example/mcp?%73ervers=a",
      "https://gw.example/mcp?servers=%zz",
      "https://gw.example/mcp?servers=a b",
      "https://gw.example/mcp?servers=a\tb",
      "https://gw.example/mcp?servers=a\nb",
      "https://gw.example/mcp?servers=a ",
      "https://gw.example/mcp?servers=\u00e9",
      "https://gw.example/mcp#?servers=a",
      "https://gw.example/mcp?servers=a#b",
      "https://gw.example/mcp?servers=a#?servers=b",
      "https://gw.example/m?cp#x",
      "http://127.0.0.1:8787/mcp?servers=echo-confirmed",
    ];
    for (const url of urls) expect(serversParam(url), url).toBe(parsed(url));
  });

  it("agrees with it on random queries of the characters that matter", () => {
    const piece = fc.constantFrom("servers", "server", "s", "=", "&", "?", "#", "%", "%2C", "%73", "+", " ", "\t", "a", "echo", ",", "\u00e9", "/", ";", "'", '"', "<");
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 16 }), (pieces) => {
        const url = `https://gw.example/mcp?${pieces.join("")}`;
        expect(serversParam(url)).toBe(parsed(url));
      }),
      { numRuns: 3000 },
    );
  });
});
