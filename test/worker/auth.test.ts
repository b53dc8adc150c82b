// Covers caller authentication (worker/auth.ts): exact tokens only, unseeded callers left out, admin flag.
import { describe, expect, it } from "vitest";
import { CallerTable } from "../../worker/auth";
import { type Roster, validateRoster } from "../../worker/roster";

function roster(): Roster {
  const result = validateRoster({
    callers: [
      { id: "alice", kind: "session", roles: ["user"], tokenSecret: "TOKEN_ALICE" },
      { id: "root", kind: "admin", roles: [], tokenSecret: "TOKEN_ROOT" },
      { id: "ghost", kind: "session", roles: ["user"], tokenSecret: "TOKEN_GHOST" },
      { id: "shorty", kind: "session", roles: ["user"], tokenSecret: "TOKEN_SHORT" },
    ],
    servers: [],
  });
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.roster;
}

const ALICE = "alice-token-0123456789abcdef";
const ROOT = "root-token-fedcba9876543210xyz";
const env = { TOKEN_ALICE: ALICE, TOKEN_ROOT: ROOT, TOKEN_SHORT: "too-short" };

describe("CallerTable", () => {
  const { table, unseeded } = CallerTable.build(roster(), env);

  it("names the callers whose secret is missing or too short to be a token, by secret name only", () => {
    expect(unseeded).toEqual(["TOKEN_GHOST", "TOKEN_SHORT"]);
  });

  it("finds each caller by its exact token, and marks the admin", () => {
    expect(table.authenticate(`Bearer ${ALICE}`)).toMatchObject({ id: "alice", isAdmin: false });
    expect(table.authenticate(`Bearer ${ROOT}`)).toMatchObject({ id: "root", isAdmin: true });
    // The scheme is case-insensitive; the token is not.
    expect(table.authenticate(`bearer ${ALICE}`)).toMatchObject({ id: "alice" });
    expect(table.authenticate(`Bearer ${ALICE.toUpperCase()}`)).toBeUndefined();
  });

  it("refuses a token one byte off at any position, a prefix, an extension and a repetition", () => {
    for (let i = 0; i < ALICE.length; i++) {
      const off = ALICE.slice(0, i) + (ALICE[i] === "x" ? "y" : "x") + ALICE.slice(i + 1);
      expect(table.authenticate(`Bearer ${off}`), `byte ${i}`).toBeUndefined();
    }
    for (const token of [ALICE.slice(0, -1), `${ALICE}0`, ALICE + ALICE, ALICE.slice(1)]) {
      expect(table.authenticate(`Bearer ${token}`), token).toBeUndefined();
    }
  });

  it("refuses a missing header, another scheme, an empty token, spaces and an unseeded caller's short secret", () => {
    for (const header of [
      null,
      `Basic ${ALICE}`,
      `XBearer ${ALICE}`,
      `Token Bearer ${ALICE}`,
      "Bearer",
      "Bearer ",
      `Bearer  ${ALICE}`,
      `Bearer ${ALICE} `,
      "Bearer too-short",
      `Bearer ${"a".repeat(4097)}`,
    ]) {
      expect(table.authenticate(header), String(header).slice(0, 20)).toBeUndefined();
    }
  });
});
