// Shared pieces of the mailbox bundle's tests: a connector over Node's sockets (the Worker's is cloudflare:sockets),
// a Dovecot started for one test file, and an env giving a mount its account there.
import { connect as netConnect, type Socket } from "node:net";
import { Duplex } from "node:stream";
import { connect as tlsConnect } from "node:tls";
import { afterAll, beforeAll } from "vitest";
import type { Connector, SocketLike } from "../../../bundles/mailbox/mailbox.connection";
import { useConnector } from "../../../bundles/mailbox/mailbox.session";
// @ts-expect-error: plain ESM helper without types
import { DEV_USERS, startDovecot } from "../../servers/dovecot/dovecot.mjs";

export interface Dovecot {
  port: number;
  tlsPort: number;
  caPem: string | undefined;
  users: Record<string, string>;
  admin(user: string): Promise<ImapAdmin>;
  recreate(user: string, mailbox: string, options?: { messages?: number }): Promise<{ before: number; after: number }>;
  /** What Dovecot wrote (its log file included): a login line says whether the connection was secured by TLS. */
  log(): string;
  stop(): Promise<void>;
}
export interface ImapAdmin {
  create(name: string): Promise<unknown>;
  deleteIfExists(name: string): Promise<void>;
  append(name: string, raw: string, flags?: string[]): Promise<number>;
  status(name: string): Promise<{ messages: number; uidValidity: number; uidNext: number }>;
  messages(name: string): Promise<{ uid: number; flags: string[] }[]>;
  mailboxes(): Promise<string[]>;
  close(): Promise<void>;
}

export const startTestDovecot = (options: Record<string, unknown> = {}): Promise<Dovecot> => startDovecot({ port: 0, tlsPort: 0, ...options });
export { DEV_USERS };

function web(socket: Socket | Duplex): SocketLike & { node: Socket | Duplex } {
  const { readable, writable } = Duplex.toWeb(socket) as unknown as { readable: ReadableStream<Uint8Array>; writable: WritableStream<Uint8Array> };
  return {
    node: socket,
    readable,
    writable,
    close: async () => {
      socket.destroy();
    },
    startTls: () => {
      throw new Error("startTls on a socket not opened for it");
    },
  };
}

/** Node's sockets as the Worker's connector: plain, TLS (trusting `ca`), or STARTTLS. Counts connections. */
export function nodeConnector(ca?: string): Connector & { opened: number } {
  const connector = ((address: { hostname: string; port: number }, options: { secureTransport: string }) => {
    connector.opened++;
    if (options.secureTransport === "on") {
      const s = tlsConnect({ host: address.hostname, port: address.port, ca, servername: address.hostname === "127.0.0.1" ? undefined : address.hostname });
      return web(s);
    }
    const raw = netConnect({ host: address.hostname, port: address.port });
    const plain = web(raw);
    if (options.secureTransport === "starttls") {
      plain.startTls = () => {
        // The web streams' reader was released by the client; the raw socket goes on under TLS.
        raw.removeAllListeners("data");
        raw.pause();
        return web(tlsConnect({ socket: raw, ca }));
      };
    }
    return plain;
  }) as unknown as Connector & { opened: number };
  connector.opened = 0;
  return connector;
}

/** The variables giving `mount` an account at the test Dovecot (plain: loopback). */
export function accountEnv(mount: string, dovecot: Dovecot, user: string, extra: Record<string, string> = {}): Record<string, string> {
  const ns = `${mount.toUpperCase().replace(/-/g, "_")}__`;
  return {
    [`${ns}IMAP_HOST`]: "127.0.0.1",
    [`${ns}IMAP_PORT`]: String(dovecot.port),
    [`${ns}IMAP_USER`]: user,
    [`${ns}IMAP_PASSWORD`]: dovecot.users[user] as string,
    [`${ns}IMAP_SECURITY`]: "plain",
    ...extra,
  };
}

export interface TestMail {
  /** The file's Dovecot; only once its beforeAll has run. */
  dovecot: () => Dovecot;
  /** `work` in an admin session of carol's account, closed after it. */
  admin: <T>(work: (a: ImapAdmin) => Promise<T>) => Promise<T>;
}

/**
 * A Dovecot for the enclosing test file, with the bundle's sockets pointed at Node's (or at `connector`), stopped and put
 * back after it. Starting Dovecot (and making its TLS certificates) takes about a second here; 60 s allows a slow CI
 * machine.
 */
export function useTestDovecot(connector: Connector = nodeConnector()): TestMail {
  let dovecot: Dovecot | undefined;
  let restore: (() => void) | undefined;
  beforeAll(async () => {
    dovecot = await startTestDovecot();
    restore = useConnector(connector);
  }, 60_000);
  afterAll(async () => {
    restore?.();
    await dovecot?.stop();
  });
  const running = () => {
    if (dovecot === undefined) throw new Error("the test Dovecot is not running");
    return dovecot;
  };
  return {
    dovecot: running,
    admin: async (work) => {
      const a = await running().admin("carol");
      try {
        return await work(a);
      } finally {
        await a.close();
      }
    },
  };
}
