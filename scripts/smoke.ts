// `npm run smoke -- <gateway-url> [token] [--roster <file>] [--confirmed <slug>] [--revision <rev>] [--timeout <ms>]`:
// after a deploy, checks a live gateway over the wire as an MCP client would, one line per step:
//   1. discover     server/discover on 2026-07-28 (the gateway serves it: worker/mcp.ts, through the SDK's handler)
//   2. initialize   initialize on 2025-11-25, then notifications/initialized (answered 202)
//   3. tools/list   every tool this token sees, named as the gateway names them (worker/selection.ts)
//   4. echo         an unconfirmed call of an `echo` tool, which must answer its text back
//   5. refusal      a guarded tool of a `confirmations: true` slug, called WITHOUT X-Elicitation-Url, which
//                   must be refused: the gateway then hands the bundle a refused channel (worker/channel.ts),
//                   and the bundle kit refuses before the tool reads or writes anything (docs/rules.md R-CHAN-9)
// Steps 3-5 speak --revision (2025-11-25 by default). The token comes as the second argument or, kept out of
// the process list, from STRAD_SMOKE_TOKEN; it is never printed, and no redirect is followed with it.
// Which slugs ask comes from the roster the gateway was deployed with (--roster, default strad.config.yaml), so
// the guarded call is only ever made where the gateway must refuse it; a waived slug is never picked.
// Exit 0 when every step passed; 1 naming the failed steps; 2 for a usage error.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createParser } from "eventsource-parser";
import type { Roster } from "../worker/roster";
import { parseRoster } from "../worker/roster-text";
// @ts-expect-error: plain ESM helper without types
import { ROOT } from "./workers.mjs";

export const LEGACY = "2025-11-25";
export const MODERN = "2026-07-28";
type Revision = typeof LEGACY | typeof MODERN;

/**
 * The guarded tools the smoke knows how to call harmlessly, with arguments that pass their input schemas
 * (bundles/echo/echo.demo.ts, bundles/google/google.send.ts). The recipient's .invalid domain can never be
 * delivered to (RFC 2606), in case a gateway ever let the call through.
 */
export const GUARDED_PROBES: Readonly<Record<string, (marker: string) => Record<string, unknown>>> = {
  demo_write: (marker) => ({ note: marker }),
  send_email: (marker) => ({ to: ["strad-smoke@example.invalid"], subject: marker, text: "A strad smoke check: this call must be refused, and nothing sent." }),
};

const USAGE =
  "usage: npm run smoke -- <gateway-url> [token] [--roster <file>] [--confirmed <slug>] [--revision 2025-11-25|2026-07-28] [--timeout <ms>]\n  (without a token argument, the token is read from STRAD_SMOKE_TOKEN)\n";

interface Options {
  url: URL;
  token: string;
  roster: Roster;
  rosterName: string;
  confirmed?: string;
  revision: Revision;
  timeoutMs: number;
}

type Message = { jsonrpc?: string; id?: unknown; result?: Record<string, unknown>; error?: { code?: unknown; message?: unknown } };
type Answer = { ok: true; status: number; message?: Message; sessionId?: string } | { ok: false; why: string };

/** One short line from text the gateway chose: no control characters, bounded. */
function clean(text: string, max = 240): string {
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

function errorWhy(error: unknown, url: URL, timeoutMs: number): string {
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) return `no answer from ${shown(url)} within ${timeoutMs} ms`;
  // Node's fetch says only "fetch failed"; its cause holds the socket's code (ECONNREFUSED) or what refused the URL.
  const cause = error instanceof Error ? (error.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  const code = typeof cause?.code === "string" ? cause.code : typeof cause?.message === "string" ? cause.message : error instanceof Error ? error.message : "unknown error";
  return `could not reach ${shown(url)} (${clean(code, 80)})`;
}

/** The URL as printed: no userinfo, whatever the operator typed. */
function shown(url: URL): string {
  const copy = new URL(url);
  copy.username = "";
  copy.password = "";
  return copy.href;
}

/** Reads an event stream until the answer to `id` arrives, then stops reading: the rest is not this call's. */
async function answerFromStream(body: ReadableStream<Uint8Array>, id: number): Promise<Message | undefined> {
  let found: Message | undefined;
  const parser = createParser({
    onEvent: (event) => {
      if (found !== undefined) return;
      try {
        const message = JSON.parse(event.data) as Message;
        if (message.id === id && (message.result !== undefined || message.error !== undefined)) found = message;
      } catch {
        // A frame that is not JSON (none should be) is not the answer.
      }
    },
  });
  const reader = body.getReader();
  const decoder = new TextDecoder();
  try {
    while (found === undefined) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return found;
}

class Session {
  private nextId = 1;
  private sessionId: string | undefined;
  constructor(private readonly o: Options) {}

  /** One JSON-RPC POST; `revision` decides the headers and, on 2026-07-28, the _meta envelope. */
  async post(method: string, params: Record<string, unknown> | undefined, revision: Revision | undefined, notification = false): Promise<Answer> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.o.token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    };
    if (revision !== undefined) headers["mcp-protocol-version"] = revision;
    if (this.sessionId !== undefined && revision === LEGACY) headers["mcp-session-id"] = this.sessionId;
    let body: Record<string, unknown> = params === undefined ? {} : { ...params };
    if (revision === MODERN) {
      // Every 2026-07-28 request names its revision and capabilities itself, and mirrors method and tool in headers.
      headers["mcp-method"] = method;
      if (method === "tools/call" && typeof body.name === "string") headers["mcp-name"] = body.name;
      body = { ...body, _meta: { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} } };
    }
    const id = this.nextId++;
    const payload = notification ? { jsonrpc: "2.0", method, ...(params === undefined ? {} : { params: body }) } : { jsonrpc: "2.0", id, method, params: body };
    let response: Response;
    try {
      response = await fetch(this.o.url, { method: "POST", headers, body: JSON.stringify(payload), redirect: "manual", signal: AbortSignal.timeout(this.o.timeoutMs) });
    } catch (error) {
      return { ok: false, why: errorWhy(error, this.o.url, this.o.timeoutMs) };
    }
    try {
      const sessionId = response.headers.get("mcp-session-id");
      if (sessionId !== null) this.sessionId = sessionId;
      if (response.status >= 300 && response.status < 400) {
        await response.body?.cancel();
        return { ok: false, why: `HTTP ${response.status}: the gateway redirected, and a bearer token is never sent after a redirect` };
      }
      const type = (response.headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase();
      if (type === "text/event-stream" && response.body !== null) {
        const message = await answerFromStream(response.body, id);
        if (message === undefined) return { ok: false, why: `HTTP ${response.status}: the event stream ended without an answer` };
        return { ok: true, status: response.status, message };
      }
      const text = await response.text();
      if (text === "") return { ok: true, status: response.status };
      let message: Message;
      try {
        message = JSON.parse(text) as Message;
      } catch {
        return { ok: false, why: `HTTP ${response.status}: the answer is not JSON` };
      }
      if (response.status >= 400) return { ok: false, why: `HTTP ${response.status}: ${clean(String(message.error?.message ?? "no reason given"))}` };
      return { ok: true, status: response.status, message };
    } catch (error) {
      return { ok: false, why: errorWhy(error, this.o.url, this.o.timeoutMs) };
    }
  }

  /** A request whose answer must be a JSON-RPC result. */
  async request(method: string, params: Record<string, unknown>, revision: Revision): Promise<{ ok: true; result: Record<string, unknown> } | { ok: false; why: string }> {
    const answer = await this.post(method, params, revision);
    if (!answer.ok) return answer;
    const error = answer.message?.error;
    if (error !== undefined) return { ok: false, why: `JSON-RPC error ${String(error.code)}: ${clean(String(error.message ?? ""))}` };
    const result = answer.message?.result;
    if (result === undefined) return { ok: false, why: `HTTP ${answer.status}: the answer holds no result` };
    return { ok: true, result };
  }
}

/** Which mounts the gateway's instructions say this token got, and whether their tools are prefixed (worker/selection.ts). */
export function readInstructions(instructions: unknown): { slugs: string[]; prefixed: boolean } | undefined {
  if (typeof instructions !== "string") return undefined;
  const listed = /(?:every server this caller may use is selected|Selected servers): ([^.]*)\./.exec(instructions)?.[1];
  if (listed === undefined) return undefined;
  const slugs = listed === "none" ? [] : listed.split(", ");
  return { slugs, prefixed: instructions.includes("Tools are named <slug>__<tool>") };
}

interface Tool {
  name: string;
  slug: string | undefined;
  tool: string;
}

/** A tool's slug and own name: `<slug>__<tool>` when the gateway prefixes, else the one mount's own. */
function route(name: string, mounts: { slugs: string[]; prefixed: boolean } | undefined): Tool {
  const at = name.indexOf("__");
  if ((mounts === undefined || mounts.prefixed) && at > 0) return { name, slug: name.slice(0, at), tool: name.slice(at + 2) };
  return { name, slug: mounts?.slugs.length === 1 ? mounts.slugs[0] : undefined, tool: name };
}

function textOf(result: Record<string, unknown>): string {
  const content = Array.isArray(result.content) ? (result.content as { type?: unknown; text?: unknown }[]) : [];
  return content.map((c) => (typeof c.text === "string" ? c.text : "")).join("");
}

type Outcome = { ok: true; detail: string } | { ok: false; detail: string };

/** Runs every step, saying one line each; answers the steps that failed and those not run for want of an earlier one. */
export async function smoke(o: Options, say: (line: string) => void): Promise<{ failed: string[]; skipped: string[] }> {
  const session = new Session(o);
  const failed: string[] = [];
  const skipped: string[] = [];
  const report = (step: string, outcome: Outcome) => {
    say(`${outcome.ok ? "PASS" : "FAIL"} ${step}: ${outcome.detail}`);
    if (!outcome.ok) failed.push(step);
  };
  const skip = (step: string, why: string) => {
    say(`SKIP ${step}: ${why}`);
    skipped.push(step);
  };
  let instructions: unknown;

  // 1. discover (2026-07-28).
  const discovered = await session.request("server/discover", {}, MODERN);
  if (!discovered.ok) report("discover", { ok: false, detail: `server/discover on ${MODERN}: ${discovered.why}` });
  else {
    const versions = Array.isArray(discovered.result.supportedVersions) ? (discovered.result.supportedVersions as unknown[]) : [];
    const info = (discovered.result._meta as Record<string, { name?: unknown; version?: unknown }> | undefined)?.["io.modelcontextprotocol/serverInfo"];
    const server = `${clean(String(info?.name ?? "?"), 60)} ${clean(String(info?.version ?? "?"), 30)}`;
    if (versions.includes(MODERN)) report("discover", { ok: true, detail: `${server} supports ${versions.map((v) => clean(String(v), 20)).join(", ")}` });
    else report("discover", { ok: false, detail: `server/discover answered, but its supportedVersions do not include ${MODERN}` });
    if (o.revision === MODERN) instructions = discovered.result.instructions;
  }

  // 2. initialize (2025-11-25), then notifications/initialized.
  const initialized = await session.request("initialize", { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: "strad-smoke", version: "1.0.0" } }, LEGACY);
  if (!initialized.ok) report("initialize", { ok: false, detail: `initialize on ${LEGACY}: ${initialized.why}` });
  else if (initialized.result.protocolVersion !== LEGACY) {
    report("initialize", { ok: false, detail: `asked for ${LEGACY}, the gateway answered ${clean(String(initialized.result.protocolVersion), 30)}` });
  } else {
    const info = initialized.result.serverInfo as { name?: unknown; version?: unknown } | undefined;
    const ack = await session.post("notifications/initialized", undefined, LEGACY, true);
    if (!ack.ok || ack.status !== 202) report("initialize", { ok: false, detail: `notifications/initialized was not accepted (${ack.ok ? `HTTP ${ack.status}` : ack.why})` });
    else report("initialize", { ok: true, detail: `${LEGACY} with ${clean(String(info?.name ?? "?"), 60)} ${clean(String(info?.version ?? "?"), 30)}; notifications/initialized answered 202` });
    if (o.revision === LEGACY) instructions = initialized.result.instructions;
  }

  const rest = ["tools/list", "echo", "refusal"];
  if (failed.includes(o.revision === MODERN ? "discover" : "initialize")) {
    for (const step of rest) skip(step, `the ${o.revision} handshake failed`);
    return { failed, skipped };
  }

  // 3. tools/list, every page.
  const tools: Tool[] = [];
  const mounts = readInstructions(instructions);
  let cursor: string | undefined;
  let listFailure: string | undefined;
  for (let page = 0; page < 50; page++) {
    const listed = await session.request("tools/list", cursor === undefined ? {} : { cursor }, o.revision);
    if (!listed.ok) {
      listFailure = listed.why;
      break;
    }
    const batch = Array.isArray(listed.result.tools) ? (listed.result.tools as { name?: unknown }[]) : [];
    for (const t of batch) if (typeof t.name === "string") tools.push(route(t.name, mounts));
    cursor = typeof listed.result.nextCursor === "string" ? listed.result.nextCursor : undefined;
    if (cursor === undefined) break;
  }
  if (listFailure !== undefined) {
    report("tools/list", { ok: false, detail: `tools/list on ${o.revision}: ${listFailure}` });
    skip("echo", "tools/list failed");
    skip("refusal", "tools/list failed");
    return { failed, skipped };
  }
  report("tools/list", { ok: tools.length > 0, detail: `${tools.length} tools${tools.length === 0 ? " (none visible to this token)" : `: ${tools.map((t) => clean(t.name, 128)).join(", ")}`}` });

  // 4. echo, unconfirmed: the plain `echo` mount first, then any mount that neither asks nor waives.
  const server = (slug: string | undefined) => o.roster.servers.find((s) => s.slug === slug);
  const quiet = (t: Tool) => {
    const s = server(t.slug);
    return s !== undefined && !s.confirmations && !s.skipConfirmations;
  };
  const echoes = tools.filter((t) => t.tool === "echo");
  const echo = echoes.find((t) => t.slug === "echo") ?? echoes.find(quiet) ?? echoes[0];
  if (echo === undefined) report("echo", { ok: false, detail: `no echo tool is visible to this token (looked for "echo" or "<slug>__echo" among ${tools.length} tools)` });
  else {
    const marker = `strad smoke ${crypto.randomUUID()}`;
    const called = await session.request("tools/call", { name: echo.name, arguments: { text: marker } }, o.revision);
    if (!called.ok) report("echo", { ok: false, detail: `${echo.name}: ${called.why}` });
    else if (called.result.isError === true || textOf(called.result) !== marker) report("echo", { ok: false, detail: `${echo.name} did not answer its text back: ${clean(textOf(called.result))}` });
    else report("echo", { ok: true, detail: `${echo.name} answered its text back` });
  }

  // 5. refusal: a guarded tool of an asking slug, without X-Elicitation-Url.
  const asking = new Set(o.roster.servers.filter((s) => s.kind === "bundle" && s.confirmations && !s.skipConfirmations).map((s) => s.slug));
  const guarded = tools.filter((t) => t.slug !== undefined && asking.has(t.slug) && Object.hasOwn(GUARDED_PROBES, t.tool) && (o.confirmed === undefined || t.slug === o.confirmed));
  const target = guarded[0];
  if (target === undefined) {
    const where = o.confirmed === undefined ? `a slug with confirmations: true in ${o.rosterName} (${[...asking].join(", ") || "none"})` : `slug ${o.confirmed}`;
    report("refusal", { ok: false, detail: `no guarded tool (${Object.keys(GUARDED_PROBES).join(", ")}) of ${where} is visible to this token` });
  } else {
    const args = (GUARDED_PROBES[target.tool] as (marker: string) => Record<string, unknown>)(`strad smoke ${crypto.randomUUID()}: must be refused`);
    const called = await session.request("tools/call", { name: target.name, arguments: args }, o.revision);
    const text = called.ok ? textOf(called.result) : "";
    if (!called.ok) report("refusal", { ok: false, detail: `${target.name}: ${called.why}` });
    else if (called.result.isError !== true || !text.startsWith("Refused: ")) report("refusal", { ok: false, detail: `${target.name} without X-Elicitation-Url was NOT refused: ${clean(text)}` });
    else report("refusal", { ok: true, detail: `${target.name} without X-Elicitation-Url was refused before it acted: ${clean(text)}` });
  }
  return { failed, skipped };
}

function parseArgs(argv: readonly string[]): Options | string {
  const positional: string[] = [];
  const flags: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (["--roster", "--confirmed", "--revision", "--timeout"].includes(arg)) {
      const value = argv[i + 1];
      if (value === undefined || value.startsWith("--")) return `${arg} needs a value`;
      flags[arg] = value;
      i++;
    } else if (arg.startsWith("-")) return `unknown option ${clean(arg, 40)}`;
    else positional.push(arg);
  }
  if (positional.length === 0 || positional.length > 2) return "give the gateway's URL, and the token unless STRAD_SMOKE_TOKEN holds it";
  const token = positional[1] ?? process.env.STRAD_SMOKE_TOKEN ?? "";
  if (token === "") return "no token: pass it after the URL, or set STRAD_SMOKE_TOKEN";
  // What worker/auth.ts accepts; anything else would only fail later, in an error that could quote it.
  if (!/^[\x21-\x7e]{1,4096}$/.test(token)) return "the token holds a character (or a length) no bearer token has";
  let url: URL;
  try {
    url = new URL(positional[0] as string);
  } catch {
    return "the gateway URL is not an absolute URL";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "the gateway URL must be http(s)";
  // The gateway's endpoint is /mcp; a bare origin means it.
  if (url.pathname === "/" || url.pathname === "") url.pathname = "/mcp";
  const revision = flags["--revision"] ?? LEGACY;
  if (revision !== LEGACY && revision !== MODERN) return `--revision is ${LEGACY} or ${MODERN}`;
  const timeoutMs = Number(flags["--timeout"] ?? 30_000);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 100 || timeoutMs > 600_000) return "--timeout is a whole number of milliseconds from 100 to 600000";
  const rosterName = flags["--roster"] ?? "strad.config.yaml";
  let text: string;
  try {
    text = readFileSync(flags["--roster"] ?? join(ROOT, "strad.config.yaml"), "utf8");
  } catch {
    return `cannot read the roster ${rosterName}`;
  }
  const parsed = parseRoster(text);
  if (!parsed.ok) return `the roster ${rosterName} is invalid (npm run check-config ${rosterName} says why)`;
  return { url, token, roster: parsed.roster, rosterName, confirmed: flags["--confirmed"], revision, timeoutMs };
}

async function main(argv: readonly string[]): Promise<number> {
  const options = parseArgs(argv);
  if (typeof options === "string") {
    process.stderr.write(`smoke: ${options}\n${USAGE}`);
    return 2;
  }
  // Belt and braces: whatever a gateway echoed, the token never reaches the terminal.
  const say = (line: string) => process.stdout.write(`${line.replaceAll(options.token, "<token>")}\n`);
  say(`smoke: ${shown(options.url)} (roster ${options.rosterName}, tool calls on ${options.revision})`);
  const { failed, skipped } = await smoke(options, say);
  if (failed.length === 0) say("smoke: PASS: every step passed");
  else say(`smoke: FAIL: ${failed.join(", ")} failed${skipped.length === 0 ? "" : `; ${skipped.join(", ")} not run`}`);
  return failed.length === 0 ? 0 : 1;
}

// Run only as a script, so a test can import the helpers without side effects.
const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) process.exitCode = await main(process.argv.slice(2));
