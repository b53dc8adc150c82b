// Runs the shared bundle contract (test/bundles/kit/contract.ts) against the Google bundle once per tool group (and for a mount that declares none): tools, annotations, no credential-shaped argument, send_email alone confirmed and refusing without a channel, and every tool outside the group neither listed nor callable.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import manifest from "../../../bundles/google/bundle.json";
import google from "../../../bundles/google/google.app";
import { CONFIRMED_TOOLS, gmailServer } from "../../../bundles/google/google.tools";
import { bundleContract, type ContractTool } from "../kit/contract";

const MOUNTS = ["gmail-rw-external", "gmail-agent", "gmail-ro"];
const credentials = Object.fromEntries(
  MOUNTS.flatMap((mount) => {
    const ns = `${mount.toUpperCase().replaceAll("-", "_")}__`;
    return [
      [`${ns}GMAIL_CLIENT_ID`, "contract-client"],
      [`${ns}GMAIL_CLIENT_SECRET`, "contract-secret"],
      [`${ns}GMAIL_REFRESH_TOKEN`, "contract-refresh"],
    ];
  }),
);
/** Every mount's own tool-group setting; undefined leaves it unset (the default). */
const groupsEnv = (value: string | undefined) =>
  value === undefined ? {} : Object.fromEntries(MOUNTS.map((mount) => [`${mount.toUpperCase().replaceAll("-", "_")}__GMAIL_ENABLED_TOOLGROUPS`, value]));

const TOOLS: Record<string, ContractTool> = {
  search_messages: { asks: "never", args: { query: "lunch" } },
  get_message: { asks: "never", args: { message_id: "msg-person-1" } },
  get_thread: { asks: "never", args: { thread_id: "thread-person-1" } },
  list_drafts: { asks: "never", args: {} },
  get_draft: { asks: "never", args: { draft_id: "draft-person-1" } },
  create_draft: { asks: "never", args: { to: ["ada@example.com"], subject: "contract", text: "hi" } },
  send_email: { asks: "always", args: { to: ["ada@example.com"], subject: "contract", text: "hi", attachments: [{ filename: "a.txt", content_base64: "aGk=" }] } },
};
const GROUPS: Record<string, readonly string[]> = manifest.toolGroups.groups;
const pick = (names: readonly string[]) => Object.fromEntries(names.map((n) => [n, TOOLS[n] as ContractTool]));

// One run per group, and one for mounts that declare none (read-only). The registry a group's mounts hold is the
// part of CONFIRMED_TOOLS they serve; readwrite_external serves every tool, so there the whole registry is checked.
for (const [label, value, group] of [
  ["readonly", "readonly", "readonly"],
  ["readwrite", "readwrite", "readwrite"],
  ["readwrite_external", "readwrite_external", "readwrite_external"],
  ["no tool groups declared (readonly)", undefined, "readonly"],
] as const) {
  const served = GROUPS[group] as readonly string[];
  bundleContract({
    bundle: `google, tool groups ${label}`,
    handler: google,
    factory: gmailServer,
    mounts: MOUNTS,
    registry: new Set([...CONFIRMED_TOOLS].filter((t) => served.includes(t))),
    env: { ...credentials, ...groupsEnv(value) },
    tools: pick(served),
    absent: Object.fromEntries(
      Object.keys(TOOLS)
        .filter((t) => !served.includes(t))
        .map((t) => [t, (TOOLS[t] as ContractTool).args]),
    ),
  });
}

describe("the Google bundle's tool groups", () => {
  it("are nested, and the widest serves exactly every tool the bundle has", () => {
    expect(Object.keys(GROUPS)).toEqual(["readonly", "readwrite", "readwrite_external"]);
    expect(manifest.toolGroups).toMatchObject({ variable: "GMAIL_ENABLED_TOOLGROUPS", default: "readonly" });
    expect(GROUPS.readonly).toEqual(["search_messages", "get_message", "get_thread", "list_drafts", "get_draft"]);
    expect(GROUPS.readwrite).toEqual([...(GROUPS.readonly ?? []), "create_draft"]);
    expect(GROUPS.readwrite_external).toEqual([...(GROUPS.readwrite ?? []), "send_email"]);
    expect([...(GROUPS.readwrite_external ?? [])].sort()).toEqual(Object.keys(TOOLS).sort());
  });
});

describe("the Google bundle's declarations", () => {
  it("confirms send_email and nothing else", () => {
    expect([...CONFIRMED_TOOLS]).toEqual(["send_email"]);
  });

  it("reaches Gmail's write endpoints only through the gate: no module of the send path calls fetch itself", () => {
    for (const file of ["google.send.ts", "google.mailbox.ts", "google.tools.ts"]) {
      const source = readFileSync(new URL(`../../../bundles/google/${file}`, import.meta.url), "utf8");
      expect(source, file).not.toMatch(/(^|[^.\w])fetch\s*\(/m);
    }
    const mailbox = readFileSync(new URL("../../../bundles/google/google.mailbox.ts", import.meta.url), "utf8");
    expect(mailbox).toMatch(/await this\.write\(/);
    // The client's own requests are the token mint and GETs; it has no way to POST to the API.
    const client = readFileSync(new URL("../../../bundles/google/google.client.ts", import.meta.url), "utf8");
    expect(client.match(/method: "POST"/g)).toHaveLength(1);
    expect(client).toMatch(/this\.doFetch\(this\.endpoints\.tokenUrl, \{\s*method: "POST"/);
  });
});
