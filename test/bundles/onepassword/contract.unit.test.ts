// Runs the shared bundle contract (test/bundles/kit/contract.ts) against the 1Password bundle on the dev roster's mounts and on one a roster entry alone adds (bundle.json serves a mount per slug): the three reads answer unasked, the reveal, the three creates and the share are its registry of confirmed tools and each refuses without a usable channel before it reads or writes anything.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import handler from "../../../bundles/onepassword/onepassword.app";
import { CONFIRMED_TOOLS, onepasswordServer } from "../../../bundles/onepassword/onepassword.tools";
import { IDS } from "../../fakes/onepassword/seed";
import { bundleContract } from "../kit/contract";

const mounts = ["onepassword", "onepassword-provisioning", "onepassword-team"];
const ref = { vault_id: IDS.engineering, item_id: IDS.github };
const env = {
  OP_CONNECT_HOST: "http://127.0.0.1:9/onepassword",
  OP_CONNECT_TOKEN: "contract-connect-token",
  ONEPASSWORD_PROVISIONING__OP_CONNECT_HOST: "http://127.0.0.1:9/onepassword",
  ONEPASSWORD_PROVISIONING__OP_CONNECT_TOKEN: "contract-connect-token-provisioning",
  ONEPASSWORD_TEAM__OP_CONNECT_HOST: "http://127.0.0.1:9/onepassword",
  ONEPASSWORD_TEAM__OP_CONNECT_TOKEN: "contract-connect-token-team",
};

bundleContract({
  bundle: "onepassword",
  handler,
  factory: onepasswordServer,
  mounts,
  registry: CONFIRMED_TOOLS,
  env,
  allowProperties: { username: "the username stored in the item being created, not the caller's identity" },
  tools: {
    onepassword_list_vaults: { asks: "never", args: {} },
    onepassword_list_items: { asks: "never", args: { vault_id: IDS.engineering } },
    onepassword_get_item_metadata: { asks: "never", args: ref },
    onepassword_get_item: { asks: "when", args: { items: [ref] } },
    onepassword_create_login: { asks: "always", args: { vault_id: IDS.engineering, items: [{ title: "contract", username: "ada", password: "contract-password" }] } },
    onepassword_create_secure_note: { asks: "always", args: { vault_id: IDS.engineering, items: [{ title: "contract", note: "body" }] } },
    onepassword_create_api_credential: { asks: "always", args: { vault_id: IDS.engineering, items: [{ title: "contract", secret: "contract-key" }] } },
    onepassword_share_item: { asks: "always", args: { items: [ref] } },
  },
});

describe("the 1Password bundle's declarations", () => {
  it("confirms the reveal, the three creates and the share, and nothing else", () => {
    expect([...CONFIRMED_TOOLS].sort()).toEqual(["onepassword_create_api_credential", "onepassword_create_login", "onepassword_create_secure_note", "onepassword_get_item", "onepassword_share_item"]);
  });

  it("reaches 1Password's write endpoints only through the gate: the tools make no fetch, and each client's writes go through the door it is handed", () => {
    for (const file of ["onepassword.tools.ts", "onepassword.confirm.ts", "onepassword.sdk.ts"]) {
      const source = readFileSync(new URL(`../../../bundles/onepassword/${file}`, import.meta.url), "utf8");
      expect(source, file).not.toMatch(/(^|[^.\w])fetch\s*\(/m);
    }
    const connect = readFileSync(new URL("../../../bundles/onepassword/onepassword.connect.ts", import.meta.url), "utf8");
    // Its one POST is the create, built lazily and handed to the gate; every other request is a GET.
    expect(connect.match(/method: "POST"/g)).toHaveLength(1);
    expect(connect).toMatch(/const init = \(\): RequestInit => \(\{ method: "POST"/);
    expect(connect).toMatch(/await door\.write\(`\$\{this\.base\}\/v1\/vaults\/\$\{item\.vaultId\}\/items`, init, door\.options\)/);
    expect(connect.match(/method: "GET"/g)).toHaveLength(1);
    const sdk = readFileSync(new URL("../../../bundles/onepassword/onepassword.sdk.ts", import.meta.url), "utf8");
    // The SDK's two writes (create, share) run inside the gate's fetch, never beside it.
    expect(sdk.match(/items\.create\(|shares\.create\(/g)).toHaveLength(2);
    expect(sdk).toMatch(/await door\.write\(\s*`op-sdk:\/\/\$\{this\.mount\}/);
  });
});
