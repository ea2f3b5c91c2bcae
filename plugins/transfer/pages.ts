// The static upload and download pages and their scripts. The token is read from the URL fragment (never
// sent to the server in the URL) and sent only as an Authorization: Bearer header. No inline script.

const STYLE = `body{font:16px system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#222}
h1{font-size:1.3rem}progress{width:100%;height:1.2rem}#status{margin-top:1rem;white-space:pre-wrap}
button{font-size:1rem;padding:.4rem 1rem}.muted{color:#666;font-size:.9rem}`;

function page(title: string, body: string, script: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${title}</title><style>${STYLE}</style></head>
<body><h1>${title}</h1>${body}<script src="/transfer/assets/${script}"></script></body></html>
`;
}

export const UPLOAD_PAGE = page(
  'Upload a file to the vault',
  `<p id="target" class="muted">Checking the link…</p>
<input type="file" id="file" disabled> <button id="send" disabled>Upload</button>
<p><progress id="bar" max="100" value="0"></progress></p><div id="status"></div>`,
  'upload.js',
);

export const DOWNLOAD_PAGE = page(
  'Download a file from the vault',
  `<p id="target" class="muted">Checking the link…</p><button id="get" disabled>Download</button>
<p><progress id="bar" max="100" value="0"></progress></p><div id="status"></div>`,
  'download.js',
);

export const UPLOAD_JS = `'use strict';
(function () {
  var token = decodeURIComponent(location.hash.slice(1));
  history.replaceState(null, '', location.pathname);
  var $ = function (id) { return document.getElementById(id); };
  var status = function (t) { $('status').textContent = t; };
  if (!token) { $('target').textContent = 'This page needs the full link you were given (it ends in #…).'; return; }
  fetch('/transfer/upload/info', { headers: { Authorization: 'Bearer ' + token }, cache: 'no-store' })
    .then(function (r) { if (!r.ok) throw new Error('This link is not valid any more. Ask for a new one.'); return r.json(); })
    .then(function (info) {
      $('target').textContent = 'Destination: ' + info.path + ' (up to ' + info.max_bytes + ' bytes; link valid until ' + info.expires_at + ')';
      $('file').disabled = false; $('send').disabled = false;
    })
    .catch(function (e) { $('target').textContent = e.message; });
  $('send').addEventListener('click', function () {
    var f = $('file').files[0];
    if (!f) { status('Choose a file first.'); return; }
    $('send').disabled = true;
    var xhr = new XMLHttpRequest();
    xhr.open('PUT', '/transfer/upload');
    xhr.setRequestHeader('Authorization', 'Bearer ' + token);
    xhr.setRequestHeader('Content-Type', 'application/octet-stream');
    xhr.upload.onprogress = function (e) { if (e.lengthComputable) $('bar').value = Math.round((100 * e.loaded) / e.total); };
    xhr.onload = function () {
      var body = {}; try { body = JSON.parse(xhr.responseText); } catch (e) {}
      if (xhr.status === 201) { $('bar').value = 100; status('Done: ' + body.path + ' (' + body.size + ' bytes, sha256 ' + body.sha256 + ')'); }
      else { status('Upload refused: ' + (body.error || ('HTTP ' + xhr.status))); }
    };
    xhr.onerror = function () { status('The upload was interrupted.'); $('send').disabled = false; };
    xhr.send(f);
  });
})();
`;

export const DOWNLOAD_JS = `'use strict';
(function () {
  var token = decodeURIComponent(location.hash.slice(1));
  history.replaceState(null, '', location.pathname);
  var $ = function (id) { return document.getElementById(id); };
  var auth = { Authorization: 'Bearer ' + token };
  if (!token) { $('target').textContent = 'This page needs the full link you were given (it ends in #…).'; return; }
  var name = 'download';
  fetch('/transfer/download/info', { headers: auth, cache: 'no-store' })
    .then(function (r) { if (!r.ok) throw new Error('This link is not valid any more. Ask for a new one.'); return r.json(); })
    .then(function (info) { name = info.name; $('target').textContent = info.path + ' (' + info.size + ' bytes)'; $('get').disabled = false; })
    .catch(function (e) { $('target').textContent = e.message; });
  $('get').addEventListener('click', function () {
    fetch('/transfer/download/file', { headers: auth, cache: 'no-store' })
      .then(function (r) { if (!r.ok) throw new Error('This link is not valid any more.'); return r.blob(); })
      .then(function (blob) {
        $('bar').value = 100;
        var a = document.createElement('a'); a.href = URL.createObjectURL(blob); a.download = name; a.click();
      })
      .catch(function (e) { $('status').textContent = e.message; });
  });
})();
`;
