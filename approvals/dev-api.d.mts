// Types of dev-api.mjs for TypeScript callers (tests, bench).
export interface ApiOptions {
  origin?: string;
  operatorToken?: string;
}
export interface Session {
  sessionId: string;
  elicitationUrl: string;
  reviewUrl: string;
}
export interface OperatorPrompt {
  requestId: string;
  message: string;
  requestedSchema: Record<string, unknown>;
  toolName: string | null;
  callerSessionId: string | null;
  createdAt: number;
  expiresAt: number;
  status: "pending" | "accept" | "decline" | "expired";
  content: Record<string, unknown> | null;
  decidedAt: number | null;
  decidedBy: string | null;
  polls: number;
  accessPolls: number;
  createdWithAccess: boolean;
}
export declare const DEV_ORIGIN: string;
export declare const DEV_OPERATOR_TOKEN: string;
export declare const DEV_ACCESS_HEADERS: Readonly<Record<"CF-Access-Client-Id" | "CF-Access-Client-Secret", string>>;
export declare function mintSession(options?: ApiOptions & { longPoll?: boolean }): Promise<Session>;
export declare function listPrompts(sessionId: string, options?: ApiOptions): Promise<OperatorPrompt[]>;
export declare function decidePrompt(sessionId: string, requestId: string, action?: "accept" | "decline", options?: ApiOptions): Promise<OperatorPrompt>;
export declare function waitForPendingPrompt(sessionId: string, options?: ApiOptions & { timeoutMs?: number; intervalMs?: number }): Promise<OperatorPrompt>;
