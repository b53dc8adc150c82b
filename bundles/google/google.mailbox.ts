// The mailbox object the tools are handed: the mount's Gmail client, its reads tied to the call's signal,
// and its writes through the kit's send gate, each bound to the message it carries. The gate decides; a
// send also needs a person's yes (or the waiver), and its token is minted only once the gate let it through.
import * as z from "zod";
import type { FingerprintInput } from "../kit/fingerprint";
import { type GatedWrite, GateRefusal, gatedWrite, type WriteOptions, type WriteWords } from "../kit/gate";
import { currentScope } from "../kit/scope";
import { GMAIL_ID, listAnswer, messageAnswer, threadAnswer } from "./google.answers";
import { checkStatus, credentialsFor, endpointsFor, GmailClient, GmailError, readJson } from "./google.client";
import { base64UrlEncode } from "./google.mime";

export { GMAIL_ID };
/** Above this the message goes to the media upload URI rather than as inline JSON; both are gated (docs/rules.md R-GATE-8). */
export const UPLOAD_THRESHOLD_BYTES = 5 * 1024 * 1024;
const ME = "/gmail/v1/users/me";

export interface GmailHeader {
  name: string;
  value: string;
}
export interface GmailPart {
  partId?: string;
  mimeType?: string;
  filename?: string;
  headers?: GmailHeader[];
  body?: { size?: number; data?: string; attachmentId?: string };
  parts?: GmailPart[];
}

const HeaderSchema = z.object({ name: z.string(), value: z.string() });
const PartSchema: z.ZodType<GmailPart> = z.lazy(() =>
  z.object({
    partId: z.string().optional(),
    mimeType: z.string().optional(),
    filename: z.string().optional(),
    headers: z.array(HeaderSchema).optional(),
    body: z.object({ size: z.number().optional(), data: z.string().optional(), attachmentId: z.string().optional() }).optional(),
    parts: z.array(PartSchema).max(500).optional(),
  }),
);
const Id = z.string().regex(GMAIL_ID);
export const MessageSchema = z.object({
  id: Id,
  threadId: Id,
  labelIds: z.array(z.string()).optional(),
  snippet: z.string().optional(),
  internalDate: z.string().optional(),
  sizeEstimate: z.number().optional(),
  payload: PartSchema.optional(),
});
export type GmailMessage = z.infer<typeof MessageSchema>;
const MessageRefSchema = z.object({ id: Id, threadId: Id });
export const ListSchema = z.object({ messages: z.array(MessageRefSchema).optional(), nextPageToken: z.string().optional(), resultSizeEstimate: z.number().optional() });
export const ThreadSchema = z.object({ id: Id, messages: z.array(MessageSchema).optional() });
export const DraftSchema = z.object({ id: Id, message: MessageSchema });
export type GmailDraft = z.infer<typeof DraftSchema>;
const DraftListSchema = z.object({ drafts: z.array(z.object({ id: Id, message: MessageRefSchema })).optional(), nextPageToken: z.string().optional(), resultSizeEstimate: z.number().optional() });
const ProfileSchema = z.object({ emailAddress: z.string().min(3).max(320) });

function parsed<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (!result.success) throw new GmailError("Gmail gave an answer of an unexpected shape");
  return result.data;
}

/** The hot reads' answers, checked by hand as their schemas would check them (google.answers.ts). */
function checked<T>(value: T | undefined): T {
  if (value === undefined) throw new GmailError("Gmail gave an answer of an unexpected shape");
  return value;
}

/** A send is bound to the message approved, needs a person's yes (or the waiver), and a refusal is worded as a send's. */
const SEND: WriteWords = { act: "send", done: "sent", target: "message" };
const sending = (approved: FingerprintInput): WriteOptions => ({ binds: approved, needsApproval: true, words: SEND });

export type ListQuery = { q?: string; labelIds?: readonly string[]; maxResults: number; pageToken?: string };

export class Mailbox {
  constructor(
    readonly client: GmailClient,
    private readonly write: GatedWrite = gatedWrite,
  ) {}

  /** The mailbox of the mount this call was routed to, built from that mount's own credentials only. */
  static forCurrentCall(write: GatedWrite = gatedWrite): Mailbox {
    const scope = currentScope();
    const credentials = credentialsFor(scope.mount, scope.env);
    if (!credentials.ok) throw new GmailError(`this mount has no Gmail credentials: ${credentials.missing} is not set`);
    return new Mailbox(new GmailClient(scope.mount, credentials.credentials, endpointsFor(scope.env)), write);
  }

  private get signal(): AbortSignal {
    return currentScope().signal;
  }

  /** The mailbox's own address, as Gmail reports it. */
  async address(): Promise<string> {
    return parsed(ProfileSchema, await this.client.get(`${ME}/profile`, {}, this.signal)).emailAddress;
  }

  async listMessages(query: ListQuery) {
    return checked(listAnswer(await this.client.get(`${ME}/messages`, { q: query.q, labelIds: query.labelIds, maxResults: String(query.maxResults), pageToken: query.pageToken }, this.signal)));
  }

  async getMessage(id: string, format: "full" | "metadata", metadataHeaders?: readonly string[]): Promise<GmailMessage> {
    return checked(messageAnswer(await this.client.get(`${ME}/messages/${checkId(id)}`, { format, metadataHeaders }, this.signal)));
  }

  async getThread(id: string) {
    return checked(threadAnswer(await this.client.get(`${ME}/threads/${checkId(id)}`, { format: "full" }, this.signal)));
  }

  async listDrafts(query: ListQuery) {
    return parsed(DraftListSchema, await this.client.get(`${ME}/drafts`, { q: query.q, maxResults: String(query.maxResults), pageToken: query.pageToken }, this.signal));
  }

  async getDraft(id: string, format: "full" | "metadata" = "full"): Promise<GmailDraft> {
    return parsed(DraftSchema, await this.client.get(`${ME}/drafts/${checkId(id)}`, { format }, this.signal));
  }

  /** Creates a draft; no one is asked (a draft goes nowhere), but the request still goes through the gate, bound to this draft. */
  async createDraft(raw: Uint8Array, threadId: string | undefined, binds: FingerprintInput): Promise<{ id: string; messageId: string }> {
    if (raw.byteLength > UPLOAD_THRESHOLD_BYTES) throw new GmailError(`a draft larger than ${UPLOAD_THRESHOLD_BYTES} bytes cannot be created here; send_email sends large messages directly`);
    const body = JSON.stringify({ message: { raw: base64UrlEncode(raw), ...(threadId === undefined ? {} : { threadId: checkId(threadId) }) } });
    const draft = parsed(DraftSchema.extend({ message: MessageRefSchema }), await this.post(this.client.url(`${ME}/drafts`), "application/json", body, { binds }));
    return { id: draft.id, messageId: draft.message.id };
  }

  /** Sends a composed message: inline JSON up to 5 MB, Gmail's upload URI above. */
  async sendMessage(raw: Uint8Array, threadId: string | undefined, approved: FingerprintInput): Promise<{ id: string; threadId: string }> {
    if (threadId !== undefined) checkId(threadId);
    if (raw.byteLength <= UPLOAD_THRESHOLD_BYTES) {
      const body = JSON.stringify({ raw: base64UrlEncode(raw), ...(threadId === undefined ? {} : { threadId }) });
      return parsed(MessageRefSchema, await this.post(this.client.url(`${ME}/messages/send`), "application/json", body, sending(approved)));
    }
    if (threadId === undefined) {
      return parsed(MessageRefSchema, await this.post(this.client.url(`/upload${ME}/messages/send`, { uploadType: "media" }), "message/rfc822", raw, sending(approved)));
    }
    // A reply needs its threadId beside the message: multipart upload carries both.
    const boundary = `upload-${crypto.randomUUID()}`;
    const head = new TextEncoder().encode(
      `--${boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n${JSON.stringify({ threadId })}\r\n--${boundary}\r\nContent-Type: message/rfc822\r\n\r\n`,
    );
    const tail = new TextEncoder().encode(`\r\n--${boundary}--\r\n`);
    const body = new Uint8Array(head.byteLength + raw.byteLength + tail.byteLength);
    body.set(head, 0);
    body.set(raw, head.byteLength);
    body.set(tail, head.byteLength + raw.byteLength);
    return parsed(MessageRefSchema, await this.post(this.client.url(`/upload${ME}/messages/send`, { uploadType: "multipart" }), `multipart/related; boundary=${boundary}`, body, sending(approved)));
  }

  async sendDraft(draftId: string, approved: FingerprintInput): Promise<{ id: string; threadId: string }> {
    checkId(draftId);
    return parsed(MessageRefSchema, await this.post(this.client.url(`${ME}/drafts/send`), "application/json", JSON.stringify({ id: draftId }), sending(approved)));
  }

  /** Every POST to Gmail: through the send gate, with a token minted for this mount once the gate let it through. */
  private async post(url: string, contentType: string, body: string | Uint8Array, gate: WriteOptions): Promise<unknown> {
    const signal = this.signal;
    let token: string | undefined;
    const init = async (): Promise<RequestInit> => {
      token = await this.client.accessToken(signal);
      return { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": contentType, accept: "application/json" }, body };
    };
    let response: Response;
    try {
      response = await this.write(url, init, gate);
    } catch (error) {
      if (error instanceof GateRefusal || error instanceof GmailError) throw error;
      throw new GmailError(signal.aborted ? "the call was dropped while the request to Gmail was in flight, so whether Gmail acted on it is unknown" : "Gmail could not be reached");
    }
    if (response.status === 401 && token !== undefined) this.client.invalidate(token);
    await checkStatus(response);
    return readJson(response);
  }
}

function checkId(id: string): string {
  if (!GMAIL_ID.test(id)) throw new GmailError("an id is not a Gmail id (letters, digits, - and _)");
  return id;
}
