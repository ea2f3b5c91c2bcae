// The external-writer race (issue 17): agents doing read_note → edit_note(expected_hash) through the real
// server while another program writes the same note, by temp file + rename or by O_APPEND. Counts the
// outside writes missing from the note afterwards. Used by bench/external-writer-race and its test; the
// outside writer runs in its own process, as an editor or sync client would.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestServer, type TestServer } from './harness.js';
import { refusalOf } from './testkit.js';

/** 'none': no outside writer (the baseline: agent writes must then never meet concurrent_write). */
export type OutsideWriterMode = 'rename' | 'append' | 'none';

export interface RaceOptions {
  readonly mode: OutsideWriterMode;
  readonly seconds: number;
  readonly agents?: number;
  /** Pause between outside writes (ms). */
  readonly pauseMs?: number;
  /** Run on this server (a fresh note per run) instead of starting one; it is left running. */
  readonly server?: TestServer;
}

export interface RaceResult {
  readonly mode: OutsideWriterMode;
  readonly externalWrites: number;
  readonly lostExternalWrites: number;
  /** Outside writes found only in a conflict copy the server kept aside (not in the note). */
  readonly keptAsideWrites: number;
  readonly agentWritesOk: number;
  /** Acknowledged agent writes missing from the note (an outside rename writer may legitimately drop them). */
  readonly lostAgentWrites: number;
  readonly agentStale: number;
  readonly agentConcurrent: number;
  readonly agentOtherErrors: string[];
}

// Plain ESM run with node: [file, mode, seconds, pauseMs]; prints the number of writes made.
const OUTSIDE_WRITER = `
import fs from 'node:fs';
import path from 'node:path';
const [file, mode, seconds, pause] = process.argv.slice(1);
const until = Date.now() + Number(seconds) * 1000;
const tmp = path.join(path.dirname(file), '.outside-' + process.pid + '.tmp');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let n = 0;
while (Date.now() < until) {
  const line = 'ext-' + n + '\\n';
  if (mode === 'append') fs.appendFileSync(file, line);
  else {
    const cur = fs.readFileSync(file);
    fs.writeFileSync(tmp, Buffer.concat([cur, Buffer.from(line)]));
    fs.renameSync(tmp, file);
  }
  n++;
  await sleep(Number(pause));
}
process.stdout.write(String(n));
`;

function runOutsideWriter(file: string, mode: OutsideWriterMode, seconds: number, pauseMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--input-type=module', '-e', OUTSIDE_WRITER, file, mode, String(seconds), String(pauseMs)],
      {
        env: { PATH: process.env.PATH ?? '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) =>
      code === 0 ? resolve(Number(out.trim())) : reject(new Error(`outside writer exited ${code}: ${err.slice(-400)}`)),
    );
  });
}

/** The refusal code a client reads from a result's contract line (the SDK's own parser, as any client would). */
function refusalCode(r: { isError?: boolean; content?: unknown }): string | undefined {
  if (!r.isError) return undefined;
  return refusalOf(r)?.code ?? 'unparsed';
}

export async function runExternalWriterRace(o: RaceOptions): Promise<RaceResult> {
  const agents = o.agents ?? 4;
  const note = `Race/shared-${o.mode}-${Date.now()}.md`;
  const server =
    o.server ??
    (await startTestServer({
      // the race is about the write path, not admission: let every agent call through
      config: { admission: { callsPerMinute: 1_000_000, writesPerMinute: 1_000_000 }, index: { watch: false } },
    }));
  try {
    const clients: Client[] = [];
    for (let i = 0; i < agents; i++) clients.push(await server.connect({ name: `agent-${i}` }));
    const made = (await clients[0].callTool({
      name: 'create_note',
      arguments: { path: note, content: '# Shared\n' },
    })) as { isError?: boolean };
    if (made.isError) throw new Error(`could not create ${note}`);
    const file = path.join(server.vaultDir, note);
    let stop = false;
    let ok = 0;
    let stale = 0;
    let concurrent = 0;
    const other: string[] = [];
    const acked: string[] = [];
    const agent = async (c: Client, a: number) => {
      for (let n = 0; !stop; n++) {
        const read = (await c.callTool({ name: 'read_note', arguments: { path: note } })) as {
          structuredContent?: { content_hash?: string };
        };
        const hash = read.structuredContent?.content_hash;
        if (!hash) continue;
        const r = (await c.callTool({
          name: 'edit_note',
          arguments: { path: note, content: `agent-${a}-${n}\n`, append: true, expected_hash: hash },
        })) as { isError?: boolean; content?: unknown };
        const code = refusalCode(r);
        if (!code) {
          ok++;
          acked.push(`agent-${a}-${n}`);
        } else if (code === 'stale_precondition') stale++;
        else if (code === 'concurrent_write') concurrent++;
        else if (other.length < 20) other.push(code);
      }
    };
    const running = clients.map((c, i) => agent(c, i));
    const externalWrites =
      o.mode === 'none'
        ? await new Promise<number>((r) => setTimeout(() => r(0), o.seconds * 1000))
        : await runOutsideWriter(file, o.mode, o.seconds, o.pauseMs ?? (o.mode === 'append' ? 4 : 12));
    stop = true;
    await Promise.all(running);
    const final = readFileSync(file, 'utf8');
    const present = new Set(final.split('\n'));
    const aside = readdirSync(path.dirname(file))
      .filter((n) => n.startsWith('.exo-conflict-'))
      .map((n) => readFileSync(path.join(path.dirname(file), n), 'utf8'))
      .join('\n')
      .split('\n');
    const asideSet = new Set(aside);
    let lost = 0;
    let keptAside = 0;
    for (let i = 0; i < externalWrites; i++) {
      const line = `ext-${i}`;
      if (present.has(line)) continue;
      if (asideSet.has(line)) keptAside++;
      else lost++;
    }
    return {
      mode: o.mode,
      externalWrites,
      lostExternalWrites: lost,
      keptAsideWrites: keptAside,
      agentWritesOk: ok,
      lostAgentWrites: acked.filter((l) => !present.has(l)).length,
      agentStale: stale,
      agentConcurrent: concurrent,
      agentOtherErrors: other,
    };
  } finally {
    if (!o.server) await server.close();
  }
}
