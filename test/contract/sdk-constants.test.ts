// What the gateway and the kit restate of the MCP SDK so that their hot paths never load its modules
// (contract/sdk.ts): each must be what the SDK itself says, or a lane would read an envelope the SDK reads
// differently. Fails on an SDK upgrade that changes any of them.
import * as sdk from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { loadSdk } from "../../contract/sdk";
import { CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, isInputRequired, PROTOCOL_VERSION_META_KEY, SDK_LEGACY_REVISIONS, SERVER_INFO_META_KEY } from "../../contract/tool-call";

describe("what contract/tool-call.ts restates of the SDK", () => {
  it("names the protocol's _meta keys as the SDK does", () => {
    expect({ PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, SERVER_INFO_META_KEY }).toEqual({
      PROTOCOL_VERSION_META_KEY: sdk.PROTOCOL_VERSION_META_KEY,
      CLIENT_CAPABILITIES_META_KEY: sdk.CLIENT_CAPABILITIES_META_KEY,
      CLIENT_INFO_META_KEY: sdk.CLIENT_INFO_META_KEY,
      SERVER_INFO_META_KEY: sdk.SERVER_INFO_META_KEY,
    });
  });

  it("lists the SDK's 2025-era revisions, in its order", () => {
    expect(SDK_LEGACY_REVISIONS).toEqual(sdk.SUPPORTED_PROTOCOL_VERSIONS);
  });

  it("tells an input_required result as the SDK's isInputRequiredResult does", () => {
    const values: unknown[] = [
      { resultType: "input_required" },
      { resultType: "input_required", inputRequests: {} },
      { resultType: "complete" },
      { resultType: "INPUT_REQUIRED" },
      {},
      [],
      Object.assign([], { resultType: "input_required" }),
      null,
      undefined,
      "input_required",
      0,
      Object.create({ resultType: "input_required" }),
    ];
    for (const value of values) expect(isInputRequired(value), JSON.stringify(value) ?? String(value)).toBe(sdk.isInputRequiredResult(value));
  });

  it("loads the SDK's package once, as the one the static import names", async () => {
    const first = loadSdk();
    expect(loadSdk()).toBe(first);
    expect((await first).classifyInboundRequest).toBe(sdk.classifyInboundRequest);
  });
});
