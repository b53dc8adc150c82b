// What the gateway's tests in Node share: an execution context whose waitUntil work can be awaited, and a stand-in
// service binding that hands each request to a Worker-style handler.

export type Ctx = ExecutionContext & { settle: () => Promise<void> };

export function executionContext(): Ctx {
  const pending: Promise<unknown>[] = [];
  return {
    waitUntil: (p: Promise<unknown>) => pending.push(p),
    passThroughOnException: () => {},
    props: {},
    settle: async () => {
      await Promise.allSettled(pending);
    },
  } as unknown as Ctx;
}

export const binding = (handler: (request: Request) => Promise<Response>) => ({ fetch: (url: string, init: RequestInit) => handler(new Request(url, init)) });
