// A write must not clobber an edit made outside the server (issue 17): an outside rename or append landing
// between the server's re-compare and its publish is put back and the agent told concurrent_write; a note
// held open for writing by another program is not replaced; with no outside writer, agent writes succeed.
import t from 'tap';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { runExternalWriterRace } from '../../src/host/testing/external-writer-race.js';
import { startTestServer } from '../../src/host/testing/harness.js';
import { writeHooks } from '../../src/host/vault/writes.js';
import { parseRefusalLine } from '../../src/sdk/refusals.js';

type Result = { isError?: boolean; content?: Array<{ text?: string }>; structuredContent?: Record<string, unknown> };
const refusal = (r: Result) => parseRefusalLine(r.content?.map((c) => c.text ?? '').join('\n') ?? '');

// Servers start slowly on a loaded machine: one serves every case here.
t.setTimeout(360_000);
const s = await startTestServer({
  files: { 'n.md': 'one\n', 'held.md': 'held\n' },
  config: {
    index: { watch: false },
    vault: { openWriterWaitMs: 50 },
    admission: { callsPerMinute: 1_000_000, writesPerMinute: 1_000_000 },
  },
});
t.teardown(() => s.close());

t.test('outside writes landing in the last instant before publish are kept', async (t) => {
  const c = await s.connect();
  const file = path.join(s.vaultDir, 'n.md');
  t.teardown(() => void (writeHooks.beforeSwap = undefined));

  for (const how of ['rename', 'append'] as const) {
    const read = (await c.callTool({ name: 'read_note', arguments: { path: 'n.md' } })) as Result;
    const hash = read.structuredContent?.content_hash as string;
    const outside = `outside-${how}\n`;
    writeHooks.beforeSwap = () => {
      writeHooks.beforeSwap = undefined;
      if (how === 'append') fs.appendFileSync(file, outside);
      else {
        fs.writeFileSync(`${file}.tmp`, fs.readFileSync(file, 'utf8') + outside);
        fs.renameSync(`${file}.tmp`, file);
      }
    };
    const r = (await c.callTool({
      name: 'edit_note',
      arguments: { path: 'n.md', content: `agent-${how}\n`, append: true, expected_hash: hash },
    })) as Result;
    t.equal(refusal(r)?.code, 'concurrent_write', `${how}: the agent is told concurrent_write`);
    t.equal(refusal(r)?.retryable, true, `${how}: and that retrying can help`);
    const now = fs.readFileSync(file, 'utf8');
    t.ok(now.endsWith(outside), `${how}: the outside write is in the note`);
    t.notOk(now.includes(`agent-${how}`), `${how}: the refused agent write is not`);
  }
  t.same(
    fs.readdirSync(s.vaultDir).filter((n) => n.startsWith('.exo-')),
    [],
    'no staging or conflict files left behind',
  );

  const again = (await c.callTool({ name: 'read_note', arguments: { path: 'n.md' } })) as Result;
  const ok = (await c.callTool({
    name: 'edit_note',
    arguments: {
      path: 'n.md',
      content: 'agent-after\n',
      append: true,
      expected_hash: again.structuredContent?.content_hash,
    },
  })) as Result;
  t.notOk(ok.isError, 'with nothing racing, the retried write succeeds');
  t.ok(fs.readFileSync(file, 'utf8').endsWith('outside-append\nagent-after\n'));
});

t.test('a note another program holds open for writing is not replaced', async (t) => {
  const c = await s.connect();
  const file = path.join(s.vaultDir, 'held.md');
  // An appender in its own process: opens the note for appending, writes after the server would have published.
  const child = spawn('/bin/sh', ['-c', 'exec 3>>"$0"; echo ready; read _; echo late-append >&3', file], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  await new Promise<void>((r) => child.stdout.once('data', () => r()));
  const read = (await c.callTool({ name: 'read_note', arguments: { path: 'held.md' } })) as Result;
  const r = (await c.callTool({
    name: 'edit_note',
    arguments: {
      path: 'held.md',
      content: 'agent\n',
      append: true,
      expected_hash: read.structuredContent?.content_hash,
    },
  })) as Result;
  t.equal(refusal(r)?.code, 'concurrent_write', 'refused while an outside writer holds the note open');
  child.stdin.end('go\n');
  await new Promise((r) => child.on('exit', r));
  t.equal(
    fs.readFileSync(file, 'utf8'),
    'held\nlate-append\n',
    "the appender's late write landed in the note, not in a discarded inode",
  );
  const again = (await c.callTool({ name: 'read_note', arguments: { path: 'held.md' } })) as Result;
  const ok = (await c.callTool({
    name: 'edit_note',
    arguments: {
      path: 'held.md',
      content: 'agent\n',
      append: true,
      expected_hash: again.structuredContent?.content_hash,
    },
  })) as Result;
  t.notOk(ok.isError, 'once it closes the note, the write goes through');
});

t.test('the external-writer race: 0 lost outside writes, and agent writes succeed without one', async (t) => {
  for (const mode of ['rename', 'append'] as const) {
    const r = await runExternalWriterRace({ mode, seconds: 3, server: s });
    t.equal(
      r.lostExternalWrites,
      0,
      `${mode}: 0 of ${r.externalWrites} outside writes lost (agents: ${r.agentWritesOk} ok, ${r.agentStale} stale, ${r.agentConcurrent} concurrent)`,
    );
    t.equal(r.keptAsideWrites, 0, `${mode}: none only in a conflict copy`);
    t.same(r.agentOtherErrors, [], `${mode}: agents met no other refusal`);
  }
  const quiet = await runExternalWriterRace({ mode: 'none', seconds: 2, server: s });
  t.ok(quiet.agentWritesOk > 0, `${quiet.agentWritesOk} agent writes with no outside writer`);
  t.equal(quiet.lostAgentWrites, 0, 'every acknowledged agent write is in the note');
  t.same(quiet.agentOtherErrors, []);
});
