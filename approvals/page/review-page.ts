// The review page's HTML shell. Everything a caller supplied is rendered by review.client.js as text;
// this shell holds only the service's own values, escaped anyway. No inline script or style (CSP).

export const CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch] as string);

function head(title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="/assets/review.css">`;
}

export interface ReviewPage {
  devMode: boolean;
  identity: string;
  csrf: string;
  /** The page's own path: /review/<key>; its JSON lives under it. */
  base: string;
}

export function renderReviewPage(p: ReviewPage): string {
  const banner = p.devMode
    ? `<div class="banner" role="alert" data-testid="dev-mode-banner"><strong>Dev mode.</strong> Nobody signed in: anyone who can open this page on this machine can answer. Never deploy this way.</div>`
    : "";
  return `${head("Approval requests")}
<meta name="strad-csrf" content="${escapeHtml(p.csrf)}">
<meta name="strad-base" content="${escapeHtml(p.base)}">
<script src="/assets/review.js" defer></script>
</head>
<body>
${banner}
<header>
<h1>Approval requests</h1>
<p class="who">Answering as <span data-testid="identity">${escapeHtml(p.identity)}</span></p>
<p class="connection" data-testid="connection-status" role="status" hidden></p>
</header>
<main>
<noscript><p class="notice">This page needs JavaScript to list and answer prompts.</p></noscript>
<p class="empty" data-testid="empty-state">No prompts are waiting. New ones appear here by themselves.</p>
<ul class="prompts" data-testid="prompt-list"></ul>
</main>
</body>
</html>
`;
}

export function renderErrorPage(reason: string): string {
  return `${head("Approvals")}
</head>
<body>
<main><p class="notice" data-testid="page-error">${escapeHtml(reason)}</p></main>
</body>
</html>
`;
}
