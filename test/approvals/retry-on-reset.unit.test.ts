// Covers the approval service tests' fetch (test/approvals/helpers.ts retryOnReset): a request whose connection was
// reset before any answer is sent once more, once, with the same body; any other failure, a second reset, or a body
// that cannot be sent again is the caller's to see.
import { expect, it } from "vitest";
import { retryOnReset } from "./helpers";

const failure = (code: string) => new TypeError("fetch failed", { cause: Object.assign(new Error(code), { code }) });

/** A fetcher that fails with each of `failures` in turn, then answers; it records what it was sent. */
function scripted(failures: string[]) {
  const sent: { input: unknown; body: unknown }[] = [];
  const fetcher = async (input: RequestInfo | URL, init?: RequestInit) => {
    sent.push({ input, body: init?.body });
    const code = failures[sent.length - 1];
    if (code !== undefined) throw failure(code);
    return new Response(`answer ${sent.length}`);
  };
  return { fetcher: fetcher as typeof fetch, sent };
}

it.each(["ECONNRESET", "UND_ERR_SOCKET"])("sends a request whose connection failed with %s once more, with the same body, and answers what the second got", async (code) => {
  const { fetcher, sent } = scripted([code]);
  const response = await retryOnReset(fetcher)("http://127.0.0.1:1/x", { method: "POST", body: "one" });
  expect(await response.text()).toBe("answer 2");
  expect(sent).toEqual([
    { input: "http://127.0.0.1:1/x", body: "one" },
    { input: "http://127.0.0.1:1/x", body: "one" },
  ]);
});

it("retries once only: a second reset is the caller's", async () => {
  const { fetcher, sent } = scripted(["ECONNRESET", "ECONNRESET"]);
  await expect(retryOnReset(fetcher)("http://127.0.0.1:1/", { method: "POST", body: "two" })).rejects.toMatchObject({ cause: { code: "ECONNRESET" } });
  expect(sent).toHaveLength(2);
});

it("never sends again a failure other than a reset, nor a body it cannot resend", async () => {
  const refused = scripted(["ECONNREFUSED"]);
  await expect(retryOnReset(refused.fetcher)("http://127.0.0.1:1/")).rejects.toMatchObject({ cause: { code: "ECONNREFUSED" } });
  expect(refused.sent).toHaveLength(1);
  const streamed = scripted(["ECONNRESET"]);
  await expect(retryOnReset(streamed.fetcher)("http://127.0.0.1:1/", { method: "POST", body: new ReadableStream() })).rejects.toMatchObject({ cause: { code: "ECONNRESET" } });
  expect(streamed.sent).toHaveLength(1);
});

it("is what every approval service test file's fetch goes through", () => {
  expect(globalThis.fetch.name).not.toBe("fetch");
});
