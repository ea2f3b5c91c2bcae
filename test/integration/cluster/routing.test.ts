// Requests routed by their vault across processes on one PostgreSQL 15 server (HAProxy in front): a
// transfer link minted through one process and redeemed through another (download and streamed upload),
// a panel page of a vault through a process that does not own it, `exocortex stdio` bridged to a process
// that does not own the operator's vault, `exocortex index` run at a process that does not index the
// vault (the pass runs at the owner) and a family command there, the panel's re-index job there (the pass
// at the owner, its summary streamed back) and a keyword-rebuild job (run where it lands), the every-vault
// agent-edits view on each process; and fair shares: a third process joining two takes its share
// (7 vaults end 3+2+2) while writers run through HAProxy. Oracles: every acknowledged write is on disk as
// acknowledged, exactly one created event each, and no two processes ever ran a vault's pipeline at once.
import t from 'tap';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createSession, SESSION_COOKIE } from '../../../src/host/auth/panel-sessions.js';
import {
  haproxyAvailable,
  startCluster,
  type ClusterProcess,
  type TestCluster,
} from '../../../src/host/testing/cluster.js';
import { postgresAvailable, startPostgres } from '../../../src/host/testing/postgres-server.js';
import { cliArgs } from '../../../src/host/testing/cli.js';

const skip = !postgresAvailable()
  ? 'PostgreSQL 15 server binaries not installed'
  : !haproxyAvailable()
    ? 'HAProxy not installed (.ci/run installs Debian haproxy)'
    : false;

const ROOT = path.resolve(import.meta.dirname, '../../..');
const sha = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
type VaultStatus = { state: string; owner?: string | null; leaseEpoch?: number | null };

t.test('requests follow their vault, and a joining process takes its share', { skip }, async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-routing-'));
  const pg = await startPostgres({ durable: true });
  let cluster: TestCluster | undefined;
  t.teardown(async () => {
    await cluster?.close();
    pg.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const vaultNames = [1, 2, 3, 4, 5, 6].map((i) => `v0${i}`);
  cluster = await startCluster({
    dir,
    databaseUrl: pg.url,
    processes: 2,
    vaults: 6,
    balancer: true,
    adminSockets: true,
    config: {
      cluster: { leaseIntervalMs: 300 },
      admission: { writesPerMinute: 1000, callsPerMinute: 2000 },
      panel: { enabled: true },
      metrics: { enabled: true, allowLoopback: true },
      transfer: { publicUrl: 'http://127.0.0.1:9' },
      users: vaultNames.map((v) => ({ name: `u-${v}`, vault: v, ...(v === 'v01' ? { admin: true } : {}) })),
    },
  });
  const c = cluster;
  const lb = c.balancer!;
  const allVaults = (await c.db.db.selectFrom('vaults').select(['id', 'name']).execute()).map((r) => ({
    id: r.id as number,
    name: r.name as string,
  }));
  t.equal(allVaults.length, 7, 'six declared vaults and the operator’s');
  // v01's user is an administrator: its key reads /health's per-vault detail.
  const opsKey = c.vaults[0].key;
  const loads = async () => Promise.all(c.processes.map((p) => c.ownedBy(p)));
  const settled = async (want: number[], ms: number) => {
    const deadline = Date.now() + ms;
    let now = await loads();
    while (Date.now() < deadline && JSON.stringify([...now].sort()) !== JSON.stringify(want)) {
      await sleep(200);
      now = await loads();
    }
    return now;
  };
  t.same([...(await settled([3, 4], 30_000))].sort(), [3, 4], 'two processes share seven vaults 4+3');
  const nonOwner = async (vaultId: number): Promise<ClusterProcess> => {
    const owner = await c.ownerOf(vaultId);
    return c.processes.find((p) => p !== owner && !p.exited)!;
  };

  // Ownership is visible: /health names each vault's owner, `exocortex vaults list` too.
  const health = async (p: ClusterProcess) => {
    const res = await fetch(`${p.url}/health`, { headers: { authorization: `Bearer ${opsKey}` } });
    return (await res.json()) as { cluster?: { process: string }; vaults: Record<string, VaultStatus> };
  };
  const h1 = await health(c.processes[0]);
  const h2 = await health(c.processes[1]);
  const owner1 = await c.ownerOf(c.vaults[0].id);
  t.equal(
    h1.vaults.v01.owner,
    (owner1 === c.processes[0] ? h1 : h2).cluster?.process,
    '/health names the owning process of a vault',
  );
  const listed = await runCli(c.processes[0].config, ['vaults', 'list']);
  t.match(listed, /\towner\t/, '`vaults list` has an owner column');
  t.match(listed, new RegExp(`v01\\t.*${escape(h1.vaults.v01.owner!)}`), '`vaults list` names v01’s owner');
  const metrics = await (await fetch(`${c.processes[0].url}/metrics`)).text();
  t.match(metrics, /exocortex_vault_leases_owned \d/, '/metrics has the lease gauge');
  t.match(metrics, /exocortex_cluster_live_bidders 2/, '/metrics counts the live bidders');
  t.match(metrics, /exocortex_vault_lease_events\{event="handed_back"\}/, '/metrics counts hand-backs');

  // A transfer link minted through the owner, redeemed through the other process.
  const tv = c.vaults[1];
  const tvOwner = (await c.ownerOf(tv.id))!;
  const tvOther = await nonOwner(tv.id);
  const minter = await c.connect(tvOwner.url, tv.key, 'minter');
  const made = await minter.callTool({
    name: 'create_note',
    arguments: { path: 'share.md', content: 'shared bytes\n' },
  });
  t.notOk(made.isError, 'a note to share');
  const dl = await minter.callTool({ name: 'request_download', arguments: { path: 'share.md' } });
  const dlToken = String((dl.structuredContent as { url: string }).url).split('#')[1];
  t.ok(dlToken, 'a download link is minted');
  const got = await fetch(`${tvOther.url}/transfer/download/file`, { headers: { authorization: `Bearer ${dlToken}` } });
  t.equal(got.status, 200, 'the download link works through the process that does not own the vault');
  t.equal(await got.text(), 'shared bytes\n', 'with the vault’s bytes');
  const up = await minter.callTool({ name: 'request_upload', arguments: { path: 'uploaded.bin' } });
  const upToken = String((up.structuredContent as { url: string }).url).split('#')[1];
  const payload = Buffer.alloc(300_000, 7);
  const put = await fetch(`${tvOther.url}/transfer/upload`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${upToken}`, 'content-type': 'application/octet-stream' },
    body: payload,
  });
  t.equal(put.status, 201, 'an upload through the other process is published by the owner');
  await put.body?.cancel();
  t.same(readFileSync(path.join(tv.root, 'uploaded.bin')), payload, 'the uploaded bytes are in the vault, whole');
  const again = await fetch(`${tvOther.url}/transfer/upload`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${upToken}` },
    body: 'x',
  });
  t.equal(again.status, 404, 'a used upload link is refused (the owner checked it again)');
  await again.body?.cancel();
  const forged = await fetch(`${tvOwner.url}/transfer/download/file`, {
    headers: {
      authorization: `Bearer ${dlToken}`,
      'x-exocortex-hop': 'someone',
      'x-exocortex-ceiling': `${Date.now()} transfer:write`,
      'x-exocortex-hop-signature': 'AAAA',
    },
  });
  t.equal(forged.status, 403, 'a transfer request with a forged hop is refused');
  await forged.body?.cancel();

  // An MCP body over the limit is refused by the process that would relay it as the owner's endpoint refuses it:
  // 413, naming the setting (the declared length is enough; the body is never read).
  const tooLarge = await new Promise<string>((resolve, reject) => {
    const { hostname, port } = new URL(tvOther.url);
    const socket = net.connect(Number(port), hostname, () =>
      socket.write(
        `POST /mcp HTTP/1.1\r\nhost: ${hostname}:${port}\r\nauthorization: Bearer ${tv.key}\r\n` +
          'content-type: application/json\r\naccept: application/json, text/event-stream\r\n' +
          'content-length: 2000000000\r\n\r\n{',
      ),
    );
    let answer = '';
    socket.on('data', (d) => (answer += d.toString('latin1')));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer')));
  });
  t.match(
    tooLarge,
    /^HTTP\/1\.1 413 /,
    'a body over the limit is refused 413 through the process that does not own it',
  );
  t.match(tooLarge, /server\.bodyLimitBytes/, 'naming the setting');

  // A panel page of a vault through the process that does not own it.
  const session = await createSession(c.db.db, 'u-v02', 3600);
  const page = await fetch(`${tvOther.url}/admin/notes/share.md`, {
    headers: { cookie: `${SESSION_COOKIE}=${session!.secret}` },
    redirect: 'manual',
  });
  t.equal(page.status, 200, 'the note page is served through the other process');
  t.match(await page.text(), /shared bytes/, 'with the note, read by the owner');

  // `exocortex stdio` bridged to a process that does not own the operator's vault.
  const operatorVault = allVaults.find((v) => !vaultNames.includes(v.name))!;
  const bridgeTo = await nonOwner(operatorVault.id);
  const stdio = new Client({ name: 'stdio-test', version: '1.0.0' });
  const bridge = new StdioClientTransport({
    command: process.execPath,
    args: [...cliArgs(), 'stdio', '--config', bridgeTo.config],
    cwd: ROOT,
    env: { ...(process.env as Record<string, string>), EXO_CONFIG: '' },
    stderr: 'pipe',
  });
  let bridgeSaid = '';
  bridge.stderr?.on('data', (d: Buffer) => {
    bridgeSaid += d.toString();
  });
  await stdio.connect(bridge).catch((e: Error) => t.fail(`stdio connects: ${e.message}\n${bridgeSaid}`));
  t.teardown(() => stdio.close().catch(() => undefined));
  const viaStdio = await stdio
    .callTool({ name: 'create_note', arguments: { path: 'from-stdio.md', content: 'through the bridge\n' } })
    .catch((e: Error) => ({ isError: true, content: [{ type: 'text', text: `${e.message}\n${bridgeSaid}` }] }));
  t.notOk(
    viaStdio.isError,
    `a write over stdio on a non-owner reaches the owner (${JSON.stringify(viaStdio.content)})`,
  );
  const operatorRoot = path.join(dir, 'vaults', 'operator');
  t.equal(
    readFileSync(path.join(operatorRoot, 'from-stdio.md'), 'utf8'),
    'through the bridge\n',
    'the note is on disk',
  );
  // `exocortex index` at a process that does not index the vault: the pass runs at the owner, its
  // progress and summary stream back through the admin channel.
  const indexHome = await runCli(bridgeTo.config, ['index']).catch((e: Error) => e.message);
  t.match(indexHome, /scanned \d+ notes/, `\`index\` at a non-owner runs at the owner (${indexHome.slice(-200)})`);
  const v02 = c.vaults[1];
  const indexV02 = await runCli((await nonOwner(v02.id)).config, ['index', '--vault', v02.name]).catch(
    (e: Error) => e.message,
  );
  t.match(
    indexV02,
    /scanned \d+ notes/,
    `\`index --vault\` at a non-owner runs at the owner (${indexV02.slice(-200)})`,
  );
  // A family command acts on the database every process shares: it runs where it lands.
  const rebuilt = await runCli(bridgeTo.config, ['search', 'rebuild-keyword']).catch((e: Error) => e.message);
  t.match(
    rebuilt,
    /rebuilt keyword vectors of \d+ notes/,
    `a family command runs at a non-owner (${rebuilt.slice(-200)})`,
  );
  // The panel's re-index job at a process that does not own the vault: the job lives there, the pass
  // runs at the owner (its pipeline), whose progress and summary stream back over a signed operator hop.
  const panelAt = await nonOwner(v02.id);
  const v02Owner = (await c.ownerOf(v02.id))!;
  const adminPanel = new PanelJar(panelAt.url, (await createSession(c.db.db, 'u-v01', 3600))!.secret);
  const hereHealth = await health(panelAt);
  t.equal(hereHealth.vaults.v02.state, 'standby', 'the panel’s process runs no index of v02');
  const reindexCsrf = await adminPanel.csrf('/admin/index');
  const startedJob = await adminPanel.request('POST', '/admin/index/reindex', {
    _csrf: reindexCsrf,
    vault: v02.name,
    rebuild: 'true',
  });
  t.equal(startedJob.status, 303, `the re-index job starts (${startedJob.status})`);
  const jobPage = await adminPanel.finished(startedJob.headers.get('location') ?? '');
  const ownerNotes = (await health(v02Owner)).vaults.v02 as VaultStatus & { notes?: number };
  t.match(jobPage, /job-state">done/, `the job at a non-owner completes (${jobPage.slice(-600)})`);
  t.match(
    jobPage,
    new RegExp(`scanned \\d+ notes[^]*indexed ${ownerNotes.notes}:`),
    `with the owner's summary: its pipeline's count of v02's notes (${ownerNotes.notes})`,
  );
  // A search command of one vault changes only shared rows: its job runs at the non-owner itself.
  const keywordJob = await adminPanel.request('POST', '/admin/index/search-command', {
    _csrf: await adminPanel.csrf('/admin/index'),
    command: 'rebuild-keyword',
    vault: v02.name,
  });
  t.equal(keywordJob.status, 303, `a keyword rebuild of v02 starts at a non-owner (${keywordJob.status})`);
  const keywordPage = await adminPanel.finished(keywordJob.headers.get('location') ?? '');
  t.match(
    keywordPage,
    /job-state">done[^]*rebuilt keyword vectors of \d+ notes of vault v02/,
    `and completes (${keywordPage.slice(-400)})`,
  );
  // A non-admin on the same process cannot start a job of another's vault, and a forged hop asserting
  // the operator of v02 is refused by the owner.
  const userPanel = new PanelJar(panelAt.url, (await createSession(c.db.db, 'u-v03', 3600))!.secret);
  const notAdmin = await userPanel.request('POST', '/admin/index/reindex', {
    _csrf: await userPanel.csrf('/admin/index'),
    vault: v02.name,
  });
  t.equal(notAdmin.status, 403, 'a non-admin’s re-index of another vault is refused');
  const noCsrf = await adminPanel.request('POST', '/admin/index/reindex', { vault: v02.name });
  t.equal(noCsrf.status, 403, 'a re-index post without the form’s CSRF token is refused');
  const forgedAtOwner = await fetch(`${v02Owner.url}/v1/index`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-exocortex-hop': 'someone',
      'x-exocortex-as': `operator:${v02.id}`,
      'x-exocortex-ceiling': `${Date.now()} notes:write`,
      'x-exocortex-hop-signature': 'AAAA',
    },
    body: '{"rebuild":true}',
  });
  t.equal(forgedAtOwner.status, 403, 'a forged operator hop to v02’s owner is refused');
  await forgedAtOwner.body?.cancel();
  // The admin's every-vault edits page: each vault's feed is read where the vault is owned, so a process
  // lists its own vaults' agent edits and links the others' one-vault views, which are routed to the owner.
  for (const p of c.processes) {
    const edits = new PanelJar(p.url, (await createSession(c.db.db, 'u-v01', 3600))!.secret);
    const where = p === v02Owner ? 'the owner' : 'a non-owner';
    const res = await edits.request('GET', '/admin/edits');
    const text = await res.text();
    t.equal(res.status, 200, `the every-vault edits page answers at ${where}`);
    if (p === v02Owner) t.match(text, /share\.md/, 'the owner lists v02’s agent edit');
    else {
      t.match(text, /id="edits-elsewhere"[^]*\?user=u-v02"/, 'a non-owner links v02’s own edits view');
      const one = await edits.request('GET', '/admin/edits?user=u-v02');
      t.equal(one.status, 200, 'v02’s own edits view answers at a non-owner');
      t.match(await one.text(), /share\.md/, 'with v02’s agent edit, read at the owner');
    }
  }
  const forgedIndex = await fetch(`${c.processes[0].url}/v1/index`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-exocortex-hop': 'someone',
      'x-exocortex-as': `operator:${operatorVault.id}`,
      'x-exocortex-ceiling': `${Date.now()} notes:write`,
      'x-exocortex-hop-signature': 'AAAA',
    },
    body: '{}',
  });
  t.equal(forgedIndex.status, 403, 'an index command over a forged hop is refused');
  await forgedIndex.body?.cancel();
  const plainIndex = await fetch(`${c.processes[0].url}/v1/index`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  t.equal(plainIndex.status, 404, 'the HTTP listener has no index command for anyone but a verified hop');
  await plainIndex.body?.cancel();
  const forgedOperator = await fetch(`${c.processes[0].url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'x-exocortex-hop': 'someone',
      'x-exocortex-as': `operator:${operatorVault.id}`,
      'x-exocortex-ceiling': `${Date.now()} notes:write`,
      'x-exocortex-hop-signature': 'AAAA',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
  t.equal(forgedOperator.status, 403, 'an operator assertion without a valid signature is refused');
  await forgedOperator.body?.cancel();

  // Fair shares: writers through HAProxy, then a third process joins.
  const acked = new Map<string, Map<string, string>>();
  let writing = true;
  const writers = c.vaults.map(async (v) => {
    const mine = new Map<string, string>();
    acked.set(v.name, mine);
    let client = await c.connect(lb, v.key, `writer-${v.name}`);
    for (let i = 0; writing; i++) {
      const p = `w/${v.name}-${i}.md`;
      const content = `# ${v.name} ${i}\n\nat ${Date.now()}\n`;
      for (let attempt = 0; writing || attempt === 0; attempt++) {
        try {
          const r = await client.callTool({ name: 'create_note', arguments: { path: p, content } }, undefined, {
            timeout: 10_000,
          });
          const out = r.structuredContent as { content_hash?: string } | undefined;
          if (!r.isError && out?.content_hash) {
            mine.set(p, out.content_hash);
            break;
          }
          if (/already_exists/.test(JSON.stringify(r.content))) {
            // A retry of a create that landed before its answer was lost.
            if (readFileSync(path.join(v.root, p), 'utf8') === content) mine.set(p, sha(content));
            break;
          }
        } catch {
          client = await c.connect(lb, v.key, `writer-${v.name}`).catch(() => client);
        }
        await sleep(100);
      }
      await sleep(250);
    }
  });
  // The pipelines' intervals, sampled from every process's /health: [first seen, last seen] per run.
  type Run = { process: string; from: number; to: number };
  const runs = new Map<string, Run[]>();
  let sampling = true;
  const open = new Map<string, Run>();
  const sampler = (async () => {
    while (sampling) {
      for (const p of c.processes) {
        if (p.exited) continue;
        const sent = Date.now();
        const h = await health(p).catch(() => undefined);
        const received = Date.now();
        if (!h) continue;
        for (const [name, v] of Object.entries(h.vaults)) {
          const key = `${p.name}/${name}`;
          const run = open.get(key);
          if (v.state === 'serving') {
            if (run) run.to = sent;
            else {
              const fresh = { process: p.name, from: received, to: sent };
              open.set(key, fresh);
              runs.set(name, [...(runs.get(name) ?? []), fresh]);
            }
          } else open.delete(key);
        }
      }
      await sleep(100);
    }
  })();
  await sleep(2000);
  const joined = await c.addProcess('r3', {});
  const balanced = await settled([2, 2, 3], 45_000);
  t.same([...balanced].sort(), [2, 2, 3], `the third process takes its share: 7 vaults end ${balanced.join('+')}`);
  t.ok((await c.ownedBy(joined)) >= 2, 'the late joiner owns vaults');
  await sleep(3000);
  t.same([...(await loads())].sort(), [2, 2, 3], 'and the shares stay put (no flapping)');
  writing = false;
  await Promise.all(writers);
  sampling = false;
  await sampler;
  const jm = await (await fetch(`${joined.url}/metrics`)).text();
  t.match(jm, /exocortex_cluster_live_bidders 3/, 'three live bidders');
  const handedBack = (
    await Promise.all(
      c.processes.map(async (p) => {
        const m = await (await fetch(`${p.url}/metrics`)).text();
        return Number(/exocortex_vault_lease_events\{event="handed_back"\} (\d+)/.exec(m)?.[1] ?? 0);
      }),
    )
  ).reduce((a, b) => a + b, 0);
  t.ok(handedBack >= 2, `vaults were handed back to even the shares (${handedBack})`);

  // Oracles after quiescence.
  for (const v of c.vaults) {
    const mine = acked.get(v.name)!;
    t.ok(mine.size > 0, `${v.name}: writes were acknowledged (${mine.size})`);
    const wrong = [...mine].filter(([p, h]) => sha(readFileSync(path.join(v.root, p), 'utf8')) !== h);
    t.same(wrong, [], `${v.name}: every acknowledged write is on disk as acknowledged`);
    let counts = new Map<string, number>();
    for (let i = 0; i < 100; i++) {
      const events = await c.db.db
        .selectFrom('change_events')
        .select(['path'])
        .where('vault_id', '=', v.id)
        .where('kind', '=', 'created')
        .where('path', 'like', 'w/%')
        .execute();
      counts = new Map();
      for (const e of events) counts.set(e.path as string, (counts.get(e.path as string) ?? 0) + 1);
      if ([...mine.keys()].every((p) => counts.has(p))) break;
      await sleep(200);
    }
    const off = [...mine.keys()].filter((p) => counts.get(p) !== 1).map((p) => `${p}: ${counts.get(p) ?? 0}`);
    t.same(off, [], `${v.name}: exactly one created event per acknowledged write`);
    t.same(
      [...counts].filter(([, n]) => n > 1),
      [],
      `${v.name}: no duplicate created events`,
    );
  }
  const overlaps: string[] = [];
  for (const [name, list] of runs)
    for (const a of list)
      for (const b of list)
        if (a !== b && a.process !== b.process && a.from <= a.to && b.from <= b.to && a.from <= b.to && b.from <= a.to)
          overlaps.push(`${name}: ${a.process} [${a.from},${a.to}] and ${b.process} [${b.from},${b.to}]`);
  t.same(overlaps, [], 'no two processes ran a vault’s pipeline at the same time');
  t.ok(
    [...runs.values()].some((list) => new Set(list.map((r) => r.process)).size > 1),
    'the sampler saw at least one vault change hands',
  );
});

/** A signed-in panel session with its CSRF cookie, the way a browser without JavaScript keeps them. */
class PanelJar {
  readonly jar = new Map<string, string>();
  constructor(
    readonly base: string,
    session: string,
  ) {
    this.jar.set(SESSION_COOKIE, session);
  }
  async request(method: string, p: string, form?: Record<string, string>): Promise<Response> {
    const res = await fetch(this.base + p, {
      method,
      redirect: 'manual',
      headers: {
        cookie: [...this.jar].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    for (const cookie of res.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const i = pair.indexOf('=');
      if (pair.slice(i + 1)) this.jar.set(pair.slice(0, i), pair.slice(i + 1));
    }
    return res;
  }
  /** The page of a panel job once it stopped running (or after a minute). */
  async finished(jobUrl: string): Promise<string> {
    let text = '';
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(250)) {
      text = await (await this.request('GET', jobUrl)).text();
      if (!/job-state">running/.test(text)) break;
    }
    return text;
  }
  async csrf(page: string): Promise<string> {
    const text = await (await this.request('GET', page)).text();
    return /name="_csrf" value="([^"]+)"/.exec(text)?.[1] ?? '';
  }
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Run an `exocortex` command with a configuration (it reaches that process's admin socket). */
async function runCli(config: string, args: string[]): Promise<string> {
  const { execFile } = await import('node:child_process');
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      [...cliArgs(), ...args, '--config', config],
      { cwd: ROOT, env: { ...process.env, EXO_CONFIG: '' }, timeout: 60_000 },
      // Both streams: `index` prints its summary on stderr.
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout + stderr)),
    ),
  );
}
