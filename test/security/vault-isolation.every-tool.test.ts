// Two users, two vaults, one server, driven over HTTP with MCP SDK clients. User B calls EVERY tool in
// its tools/list (generated from the list, so a tool added later is covered without anyone remembering)
// with every identifier learned from user A — paths, cursors, transfer ids, hashes — and must learn
// nothing of A's vault: no result, refusal, count or snippet carries A's content. Resources, prompts,
// completions, subscriptions and the server instructions are held to the same rule.
import t from 'tap';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { createApiKey } from '../../src/host/auth/api-keys.js';
import { userByName } from '../../src/host/auth/users.js';
import { startTestServer } from '../../src/host/testing/harness.js';

t.setTimeout(300_000);

const A_NOTE = 'alpha-private/Alpha Secret Plans.md';
/** Words only A's vault holds, which B never sends: any of them in an answer to B is a leak. */
const SECRETS = [
  'hiddenpayload',
  'secretfrontvalue',
  'alphahidden',
  'Alpha Other',
  'alpha-diary',
  'feed the alpha cat',
  'northdata',
  'northvault',
  'alice',
];

const tmp = mkdtempSync(path.join(os.tmpdir(), 'exo-isolation-'));
const rootA = path.join(tmp, 'north');
const rootB = path.join(tmp, 'south');
const put = (root: string, rel: string, text: string) => {
  mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  writeFileSync(path.join(root, rel), text);
};
put(
  rootA,
  A_NOTE,
  '---\ncodename: secretfrontvalue\ntags: [alphahidden]\n---\n# Plans\n\nzqxalphasecret hiddenpayload, see [[Alpha Other]]. #alphatag\n\n- [ ] feed the alpha cat 📅 2026-01-01\n- [ ] second alpha chore\n\n## Section One\n\nhiddenpayload again\n',
);
put(rootA, 'alpha-diary/Alpha Other.md', 'hiddenpayload two, back to [[Alpha Secret Plans]] #alphatag\n');
put(rootA, 'alpha-diary/northdata.csv', 'hiddenpayload,1\n');
put(rootB, 'Beta Note.md', '# Beta\n\nbeta content #betatag\n\n- [ ] beta task\n');

const server = await startTestServer({
  config: {
    server: { publicUrl: 'https://exo.test' },
    vaults: [
      { name: 'northvault', path: rootA },
      { name: 'southvault', path: rootB },
    ],
    users: [
      { name: 'alice', vault: 'northvault' },
      { name: 'bob', vault: 'southvault' },
    ],
  },
});
t.teardown(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});
const db = server.host.database.db;
const keyFor = async (user: string) => {
  const u = (await userByName(db, user))!;
  return (await createApiKey(db, { name: `${user}-key`, scope: 'readwrite', vaultId: u.vaultId!, userId: u.id })).raw;
};
const alice = await server.connect({ key: await keyFor('alice'), name: 'alice' });
const bob = await server.connect({ key: await keyFor('bob'), name: 'bob' });
t.test('both vaults are served, each with its own index', async (t) => {
  for (const name of ['northvault', 'southvault']) {
    const v = server.host.vaults.all().find((x) => x.row.name === name)!;
    t.equal(v.state, 'serving', `${name} is served${v.reason ? `: ${v.reason}` : ''}`);
    const deadline = Date.now() + 60_000;
    while (!(v.index!.status().ready && v.index!.status().pending === 0) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    t.ok(v.index!.status().ready, `${name} is indexed`);
  }
  t.equal(server.host.vaults.all().length, 3, 'vault.path and the two declared vaults');
});

function treeHash(root: string): string {
  const h = createHash('sha256');
  const visit = (dir: string) => {
    for (const e of readdirSync(dir).sort()) {
      const p = path.join(dir, e);
      if (statSync(p).isDirectory()) visit(p);
      else h.update(path.relative(root, p)).update(readFileSync(p));
    }
  };
  visit(root);
  return h.digest('hex');
}
/** Secrets in an answer that the caller did not send itself (a refusal may echo the caller's own arguments). */
const leaks = (value: unknown, sent: unknown = '') => {
  const text = JSON.stringify(value);
  const asked = JSON.stringify(sent);
  return SECRETS.filter((s) => text.includes(s) && !asked.includes(s));
};
const call = async (client: Client, name: string, args: Record<string, unknown>) => {
  try {
    return await client.callTool({ name, arguments: args });
  } catch (e) {
    return { protocolError: (e as Error).message };
  }
};

/** Every string A's answers carry under an identifier-like key (cursors, ids, hashes, links). */
const learned = new Map<string, Set<string>>();
const harvest = (value: unknown) => {
  const walk = (v: unknown, key: string) => {
    if (typeof v === 'string') {
      if (/cursor|since|(^|_)id$|url|hash|token|^revision$/.test(key)) {
        if (!learned.has(key)) learned.set(key, new Set());
        learned.get(key)!.add(v);
      }
    } else if (Array.isArray(v)) v.forEach((x) => walk(x, key));
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, k);
  };
  walk(value, '');
};
const learnedFor = (prop: string): string[] => {
  const out = new Set<string>();
  for (const [k, vs] of learned)
    if (
      k === prop ||
      k === `next_${prop}` ||
      k.endsWith(`_${prop}`) ||
      (prop.endsWith('_id') && k === 'id') ||
      (prop === 'expected_hash' && k === 'content_hash')
    )
      vs.forEach((v) => out.add(v));
  return [...out].slice(0, 4);
};

t.test("user A can see what B must not (the test is not vacuous), and A's identifiers are learned", async (t) => {
  const aTools = (await alice.listTools()).tools.map((x) => x.name);
  const asA: Array<[string, Record<string, unknown>]> = [
    ['list_notes', { limit: 1 }],
    ['list_notes', {}],
    ['get_recent', { limit: 1 }],
    ['get_changes', { since: 'ev:0', limit: 1 }],
    ['read_note', { path: A_NOTE }],
    ['keyword_search', { query: 'hiddenpayload' }],
    ['search', { query: 'hiddenpayload' }],
    ['list_tasks', { limit: 1 }],
    ['list_files', {}],
    ['request_download', { path: A_NOTE }],
    ['request_upload', { path: 'alpha-private/upload.bin' }],
    ['get_backlinks', { path: A_NOTE }],
    ['list_bases', {}],
    [
      'query_base',
      { yaml: 'filters: file.ext == "md"\nviews: [{type: table, name: T, order: [file.name, file.tags]}]' },
    ],
    // A write, so the history family holds a revision of A's note (its id is learned and tried by B).
    ['edit_note', { path: A_NOTE, content: '\nan edit by A', append: true }],
    ['list_revisions', { path: A_NOTE }],
    ['list_deleted_notes', {}],
  ];
  let seen = '';
  for (const [name, args] of asA) {
    if (!aTools.includes(name)) continue;
    const r = await call(alice, name, args);
    harvest(r);
    seen += JSON.stringify(r);
  }
  t.ok(seen.includes('hiddenpayload') && seen.includes('Alpha Other'), 'A reads its own secrets');
  t.ok(learned.size > 3, `identifiers learned from A: ${[...learned.keys()].join(', ')}`);
});

t.test("the server instructions name each user's own vault only", async (t) => {
  t.match(alice.getInstructions() ?? '', /northvault/);
  t.match(bob.getInstructions() ?? '', /southvault/);
  t.same(leaks(bob.getInstructions()), []);
});

t.test("a resource update in A's vault reaches A's subscription and never B's", async (t) => {
  const uri = `vault://note/${encodeURI(A_NOTE)}`;
  const got = { alice: [] as string[], bob: [] as string[] };
  alice.setNotificationHandler(ResourceUpdatedNotificationSchema, async (n) => void got.alice.push(n.params.uri));
  bob.setNotificationHandler(ResourceUpdatedNotificationSchema, async (n) => void got.bob.push(n.params.uri));
  for (const c of [alice, bob]) {
    await c.subscribeResource({ uri });
    await c.subscribeResource({ uri: 'vault://changes' });
  }
  const r = await call(alice, 'edit_note', {
    path: A_NOTE,
    content: '\nappended by alice hiddenpayload\n',
    append: true,
  });
  t.notOk((r as { isError?: boolean }).isError, 'A edits its note');
  const deadline = Date.now() + 10_000;
  while (!(got.alice.includes(uri) && got.alice.includes('vault://changes')) && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 50));
  t.ok(got.alice.includes(uri), 'A hears of its note');
  t.ok(got.alice.includes('vault://changes'), 'A hears of its change feed');
  await new Promise((r) => setTimeout(r, 800));
  t.same(got.bob, [], "B hears nothing of A's vault");
  for (const c of [alice, bob]) {
    await c.unsubscribeResource({ uri });
    await c.unsubscribeResource({ uri: 'vault://changes' });
  }
  harvest(r);
});

/** Arguments for one property: A's identifiers where the name says it takes one, else a plain value. */
function valueFor(prop: string, schema: Record<string, any>): unknown[] {
  const fromA = learnedFor(prop);
  if (schema.type === 'array') {
    const inner = valueFor(prop.replace(/s$/, ''), schema.items ?? {});
    return [inner.slice(0, 1)];
  }
  if (schema.enum) return [schema.enum[0]];
  if (schema.type === 'integer' || schema.type === 'number') return [Math.max(1, schema.minimum ?? 1)];
  if (schema.type === 'boolean') return [false];
  if (schema.type === 'object') return [{}];
  if (/^(path|from_path|file|note)$/.test(prop)) return [A_NOTE];
  if (prop === 'to_path') return ['moved-by-bob.md'];
  if (prop === 'folder') return ['alpha-private'];
  if (/query|pattern|find/.test(prop)) return ['zqxalphasecret'];
  if (/tag/.test(prop)) return [prop === 'new_tag' ? 'betatag2' : 'alphatag'];
  if (prop === 'url') return ['https://exo.invalid/x'];
  if (prop === 'since') return [...fromA, 'ev:0'];
  if (fromA.length) return fromA;
  if (/content|replacement/.test(prop)) return ['written by bob'];
  return ['x'];
}

t.test("every tool B can call, with every identifier learned from A, answers nothing of A's", async (t) => {
  const before = treeHash(rootA);
  const tools = (await bob.listTools()).tools;
  t.same(
    tools.map((x) => x.name).sort(),
    (await alice.listTools()).tools.map((x) => x.name).sort(),
    'B lists the same tools as A',
  );
  t.ok(tools.length >= 30, `${tools.length} tools under test`);
  let calls = 0;
  for (const tool of tools) {
    const props = (tool.inputSchema.properties ?? {}) as Record<string, Record<string, any>>;
    const required = new Set((tool.inputSchema.required as string[] | undefined) ?? []);
    const base: Record<string, unknown> = {};
    for (const p of required) base[p] = valueFor(p, props[p])[0];
    const variants: Array<Record<string, unknown>> = [base];
    for (const [p, s] of Object.entries(props)) {
      const vs = required.has(p) ? valueFor(p, s).slice(1) : valueFor(p, s);
      for (const v of vs) variants.push({ ...base, [p]: v });
    }
    // Every A identifier the tool could take, all at once.
    const all = { ...base };
    for (const [p, s] of Object.entries(props)) if (learnedFor(p).length) all[p] = valueFor(p, s)[0];
    variants.push(all);
    for (const args of variants) {
      const r = await call(bob, tool.name, args);
      calls++;
      const found = leaks(r, args);
      if (found.length)
        t.fail(`${tool.name}(${JSON.stringify(args)}) leaked ${found.join(', ')}: ${JSON.stringify(r).slice(0, 400)}`);
    }
  }
  t.pass(`${calls} calls by B, none revealed anything of A's vault`);
  t.equal(treeHash(rootA), before, "A's vault files are untouched by B's calls");
});

t.test("resources, templates, prompts and completions answer B about B's vault only", async (t) => {
  const list = await bob.listResources();
  t.same(leaks(list), [], 'resources/list');
  t.same(leaks(await bob.listResourceTemplates()), [], 'resources/templates/list');
  for (const uri of [
    `vault://note/${encodeURI(A_NOTE)}`,
    `vault://note/${A_NOTE}`,
    'vault://note/alpha-diary/Alpha%20Other.md',
    'vault://changes',
    'vault://guide',
    ...list.resources.map((r) => r.uri),
  ]) {
    let out: unknown;
    try {
      out = await bob.readResource({ uri });
    } catch (e) {
      out = (e as Error).message;
    }
    t.same(leaks(out, [uri, decodeURIComponent(uri)]), [], `resources/read ${uri}`);
  }
  const prompts = (await bob.listPrompts()).prompts;
  for (const p of prompts) {
    const args: Record<string, string> = {};
    for (const a of p.arguments ?? [])
      args[a.name] = /path|note/.test(a.name) ? A_NOTE : /folder/.test(a.name) ? 'alpha-private' : 'hiddenpayload-free';
    let out: unknown;
    try {
      out = await bob.getPrompt({ name: p.name, arguments: args });
    } catch (e) {
      out = (e as Error).message;
    }
    t.same(leaks(out, args), [], `prompts/get ${p.name}`);
    for (const a of p.arguments ?? []) {
      const c = await bob
        .complete({ ref: { type: 'ref/prompt', name: p.name }, argument: { name: a.name, value: 'Alpha' } })
        .catch((e: Error) => e.message);
      t.same(leaks(c), [], `completion of ${p.name}.${a.name}`);
    }
  }
  for (const tpl of (await bob.listResourceTemplates()).resourceTemplates) {
    for (const name of [...tpl.uriTemplate.matchAll(/\{\+?(\w+)\}/g)].map((m) => m[1])) {
      for (const value of ['', 'Alpha', 'alpha-diary/']) {
        const c = await bob
          .complete({ ref: { type: 'ref/resource', uri: tpl.uriTemplate }, argument: { name, value } })
          .catch((e: Error) => e.message);
        t.same(leaks(c, value), [], `completion of ${tpl.uriTemplate} ${name}="${value}"`);
      }
    }
  }
});
