// The sign-in and consent pages: small server-rendered HTML that works without JavaScript, every
// interpolated value escaped, styled by one nonce'd style block so the CSP can forbid everything else.
// Pure: renders strings, never reads a request.
import { escapeHtml } from './provider.js';

export interface PageFrame {
  readonly nonce: string;
  readonly csrf: string;
  readonly action: string;
}

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f6f6f4;color:#1d1d1b}
main{max-width:28rem;margin:3rem auto;padding:1.5rem 2rem;background:#fff;border:1px solid #ddd;border-radius:8px}
h1{font-size:1.3rem;margin-top:0}label{display:block;margin:.8rem 0 .2rem;font-weight:600}
input[type=text],input[type=password]{width:100%;box-sizing:border-box;padding:.5rem;font-size:1rem}
fieldset{border:1px solid #ddd;margin:1rem 0;padding:.5rem 1rem}fieldset label{font-weight:400;display:flex;gap:.5rem;align-items:baseline}
button{margin-top:1rem;padding:.5rem 1.2rem;font-size:1rem}.error{color:#a01010;font-weight:600}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem}dt{font-weight:600}dd{margin:0;word-break:break-all}
.row{display:flex;gap:1rem}small{color:#555}`;

function page(title: string, frame: PageFrame, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)} · Exocortex</title><style nonce="${frame.nonce}">${STYLE}</style></head>
<body><main>${body}</main></body></html>`;
}

export function signInPage(frame: PageFrame, o: { clientName: string; error?: string; userName?: string }): string {
  return page(
    'Sign in',
    frame,
    `<h1>Sign in to Exocortex</h1>
<p><strong>${escapeHtml(o.clientName)}</strong> asks to use your vault. Sign in first.</p>
${o.error ? `<p class="error" role="alert">${escapeHtml(o.error)}</p>` : ''}
<form method="post" action="${escapeHtml(frame.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(frame.csrf)}">
<label for="user">User name</label><input type="text" id="user" name="user" autocomplete="username" value="${escapeHtml(o.userName ?? '')}" required>
<label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password">
<p><small>No password? Paste a one-time code from <code>exocortex users login-link NAME</code> instead.</small></p>
<label for="code">One-time sign-in code</label><input type="text" id="code" name="code" autocomplete="one-time-code">
<button type="submit">Sign in</button>
</form>`,
  );
}

export interface ConsentView {
  readonly clientName: string;
  readonly clientId: string;
  readonly redirectHost: string;
  readonly registration: 'dynamic registration (DCR)' | 'client metadata document';
  readonly user: string;
  readonly vault: string;
  readonly wantsWrite: boolean;
}

export function consentPage(frame: PageFrame, v: ConsentView): string {
  return page(
    'Allow access',
    frame,
    `<h1>Allow ${escapeHtml(v.clientName)} to use your vault?</h1>
<dl>
<dt>Client</dt><dd>${escapeHtml(v.clientName)}</dd>
<dt>Client id</dt><dd><code>${escapeHtml(v.clientId)}</code></dd>
<dt>Registered by</dt><dd>${escapeHtml(v.registration)}</dd>
<dt>Sends you back to</dt><dd>${escapeHtml(v.redirectHost)}</dd>
<dt>Signed in as</dt><dd>${escapeHtml(v.user)}</dd>
<dt>Vault</dt><dd>${escapeHtml(v.vault)}</dd>
</dl>
<form method="post" action="${escapeHtml(frame.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(frame.csrf)}">
<fieldset><legend>What it may do</legend>
<label><input type="checkbox" name="scope" value="vault:read" checked> Read and search notes (vault:read)</label>
${v.wantsWrite ? '<label><input type="checkbox" name="scope" value="vault:write"> Create, edit, move and delete notes (vault:write)</label>' : '<p><small>It did not ask to change notes.</small></p>'}
</fieldset>
<div class="row"><button type="submit" name="decision" value="allow">Allow</button><button type="submit" name="decision" value="deny">Deny</button></div>
</form>`,
  );
}

export function messagePage(frame: Pick<PageFrame, 'nonce'>, title: string, text: string): string {
  return page(title, { ...frame, csrf: '', action: '' }, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p>`);
}
