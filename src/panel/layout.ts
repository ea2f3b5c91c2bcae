// The panel's page frame (head, navigation, flash message) and its one stylesheet. Pages render their
// main content with `html`; this wraps it. Pure: no request, no I/O.
import { html, raw, type Html } from './html.js';
import type { PanelUser } from '../host/auth/panel-sessions.js';

export interface Frame {
  readonly user: PanelUser | null;
  /** The CSRF token every form posts as `_csrf`. */
  readonly csrf: string;
  /** The nav entry to mark current. */
  readonly current?: string;
  readonly flash?: string;
  readonly error?: string;
}

const NAV: ReadonlyArray<readonly [string, string]> = [
  ['overview', 'Overview'],
  ['usage', 'Usage'],
  ['credentials', 'Credentials'],
  ['edits', 'Agent edits'],
  ['index', 'Index and search'],
  ['users', 'Users and vaults'],
  ['danger', 'Danger zone'],
];
const ADMIN_ONLY = new Set(['users', 'danger']);

export function page(frame: Frame, title: string, body: Html): string {
  const nav = frame.user
    ? html`<nav aria-label="Panel"><ul>${NAV.filter(([slug]) => !ADMIN_ONLY.has(slug) || frame.user?.admin).map(([slug, label]) => html`<li><a href="/admin/${slug === 'overview' ? '' : slug}"${frame.current === slug ? raw(' aria-current="page"') : ''}>${label}</a></li>`)}</ul>
<form method="post" action="/admin/sign-out" class="signout"><input type="hidden" name="_csrf" value="${frame.csrf}"><span>${frame.user.name}${frame.user.admin ? ' (admin)' : ''}</span> <button type="submit">Sign out</button></form></nav>`
    : '';
  return `<!doctype html>
${
  html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="htmx-config" content='{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false}'>
<title>${title} · Exocortex panel</title><link rel="stylesheet" href="/admin/assets/panel.css">
<script src="/admin/assets/htmx.min.js" defer></script></head>
<body><header><a class="brand" href="/admin/">Exocortex</a>${nav}</header>
<main id="main">${frame.flash ? html`<p class="flash" role="status">${frame.flash}</p>` : ''}${frame.error ? html`<p class="error" role="alert">${frame.error}</p>` : ''}
<h1>${title}</h1>
${body}</main></body></html>`.value
}`;
}

/** A hidden CSRF field for a form. */
export function csrfField(frame: Pick<Frame, 'csrf'>): Html {
  return html`<input type="hidden" name="_csrf" value="${frame.csrf}">`;
}

/** A compact, contrast-checked (WCAG AA) stylesheet; one column on a phone. */
export const PANEL_CSS = `*{box-sizing:border-box}
body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;background:#f5f5f2;color:#1b1b19}
a{color:#0b57a4}a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,summary:focus-visible{outline:3px solid #e0a000;outline-offset:2px}
header{background:#1f2a36;color:#fff;padding:.5rem 1rem;display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;align-items:center}
header a{color:#fff}.brand{font-weight:700;text-decoration:none;font-size:1.1rem}
nav{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;flex:1}
nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem 1rem}
nav a[aria-current=page]{font-weight:700;text-decoration-thickness:3px}
.signout{margin-left:auto;display:flex;gap:.5rem;align-items:center}.signout button{margin:0;padding:.2rem .7rem}
main{max-width:72rem;margin:0 auto;padding:1rem}
h1{font-size:1.5rem;margin:.5rem 0 1rem}h2{font-size:1.2rem;margin:1.5rem 0 .5rem}section>h2:first-child,.card>h2:first-child{margin-top:0}
section,.card{background:#fff;border:1px solid #d6d6d0;border-radius:6px;padding:1rem;margin:0 0 1rem}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(14rem,1fr));gap:1rem}
.stat{font-size:1.6rem;font-weight:700;display:block}
table{border-collapse:collapse;width:100%;font-size:.95rem}th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #e2e2dc;vertical-align:top}
thead th{background:#efefea}tr.diff-row td{border-top:0;padding-top:0}.table-wrap{overflow-x:auto}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
label{display:block;font-weight:600;margin:.6rem 0 .2rem}
input[type=text],input[type=password],input[type=search],select{width:100%;max-width:24rem;padding:.45rem;font-size:1rem;border:1px solid #767670;border-radius:4px;background:#fff;color:#1b1b19}
button{font-size:1rem;padding:.45rem 1rem;border:1px solid #1f2a36;border-radius:4px;background:#1f2a36;color:#fff;cursor:pointer;margin-top:.6rem}
button.secondary{background:#fff;color:#1f2a36}button.danger{background:#a4161a;border-color:#a4161a}
td form{display:inline}form button+a{margin-left:.8rem}td button{margin:0;padding:.15rem .6rem;font-size:.9rem}
.flash{background:#e3f4e1;border:1px solid #2e7d32;padding:.5rem .8rem;border-radius:4px}
.error{background:#fde8e8;border:1px solid #a4161a;color:#7a0f12;padding:.5rem .8rem;border-radius:4px;font-weight:600}
.secret{font:1rem ui-monospace,monospace;background:#fff8d6;border:1px solid #b58900;padding:.6rem;word-break:break-all;display:block}
.state-on{color:#1e6b24;font-weight:600}.state-off{color:#5c5c57}.state-ro{color:#8a5a00;font-weight:600}.state-bad{color:#a4161a;font-weight:600}
pre.diff{background:#fafaf7;border:1px solid #e2e2dc;padding:.5rem;overflow-x:auto;font-size:.85rem;max-height:24rem}
.diff .add{color:#1e6b24}.diff .del{color:#a4161a}
progress{width:100%;max-width:24rem;height:1.2rem}
form.inline{display:inline;margin-left:.5rem}.muted{color:#5c5c57}.note-body{max-width:46rem}.note-body img{max-width:100%}.note-body li.task{list-style:none;margin-left:-1.2rem}.note-body .dangling{color:#8a1c1c;text-decoration:underline dotted}
fieldset{border:1px solid #d6d6d0;border-radius:4px}legend{font-weight:600}
fieldset label{font-weight:400;display:flex;gap:.4rem;align-items:center;margin:.2rem 0}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.3rem 1rem;margin:.3rem 0}
svg.chart{width:100%;height:auto;max-width:60rem}svg.chart text{font:11px system-ui,sans-serif;fill:#3a3a36}
@media (max-width:40rem){main{padding:.5rem}h1{font-size:1.25rem}th,td{padding:.3rem}}
`;
