// What must hold across the processes of the replicas scenario (replicas-scenario.ts) whichever one a
// request reaches: a multi-round-trip request's sealed state, per-user limits (and how far a failover
// exceeds them), revocation, the forwarding hop's signature, and a read-only deployment's tool set.
import { revokeApiKey } from '../auth/api-keys.js';
import type { ClusterVault, TestCluster } from './cluster.js';
import { sleep, type ModernClients } from './replicas-clients.js';
import { cutLease, epochsOf, type Checks } from './replicas-oracles.js';

/** One raw JSON-RPC POST to a process's /mcp with a vault's key (and any extra headers). */
function postMcp(base: string, key: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

const LIST_TOOLS = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };

/**
 * A multi-round-trip request (2026-07-28) whose rounds reach three different processes: the sealed
 * requestState minted by one opens on the others (the key is in PostgreSQL); a tampered one is refused.
 * Needs the conformance fixture family (its test_input_required_result_multi_round tool).
 */
export async function checkMultiRound(t: Checks, c: TestCluster, vault: ClusterVault): Promise<void> {
  let rpcId = 100;
  const round = async (base: string, params: Record<string, unknown>) => {
    const res = await postMcp(
      base,
      vault.key,
      {
        jsonrpc: '2.0',
        id: ++rpcId,
        method: 'tools/call',
        params: {
          name: 'test_input_required_result_multi_round',
          arguments: {},
          ...params,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
          },
        },
      },
      {
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'test_input_required_result_multi_round',
      },
    );
    const text = await res.text();
    const json = text.trimStart().startsWith('{')
      ? text
      : (text
          .split('\n')
          .filter((x) => x.startsWith('data:'))
          .map((x) => x.slice(5).trim())
          .find((x) => x.includes(`"id":${rpcId}`)) ?? text);
    return JSON.parse(json) as {
      result?: { resultType?: string; requestState?: string; content?: Array<{ text: string }> };
      error?: unknown;
    };
  };
  const [pa, pb, pc] = c.processes.filter((p) => !p.exited);
  const r1 = await round(pa.url, {});
  t.equal(r1.result?.resultType, 'input_required', `round 1 at ${pa.name} asks for input`);
  const r2 = await round(pb.url, {
    requestState: r1.result?.requestState,
    inputResponses: { step1: { action: 'accept', content: { name: 'Ada' } } },
  });
  t.equal(
    r2.result?.resultType,
    'input_required',
    `round 2 at ${pb.name} opens round 1’s state (${JSON.stringify(r2.error ?? '')})`,
  );
  const r3 = await round(pc.url, {
    requestState: r2.result?.requestState,
    inputResponses: { step2: { action: 'accept', content: { color: 'green' } } },
  });
  t.match(
    r3.result?.content?.[0]?.text ?? JSON.stringify(r3),
    /Multi-round complete: Ada likes green/,
    `round 3 at ${pc.name} completes the exchange`,
  );
  const tampered = await round(pb.url, {
    requestState: `${r2.result?.requestState?.slice(0, -4)}AAAA`,
    inputResponses: { step2: { action: 'accept', content: { color: 'green' } } },
  });
  t.ok(tampered.error, 'a tampered requestState is refused on any process');
}

/**
 * Per-user limits hold across processes (all of a user's calls reach the one owner): `vault`'s user may
 * make 20 calls a minute. With `failover`, the vault's owner then loses its lease connection: the bucket
 * lived in the old owner's memory, so the new owner starts with a full one; the excess is reported.
 */
export async function checkUserLimit(
  t: Checks,
  c: TestCluster,
  vault: ClusterVault,
  modern: ModernClients,
  failover: boolean,
): Promise<void> {
  const clients = await Promise.all(c.processes.map((p) => c.connect(p.url, vault.key, 'limited')));
  let admitted = 0;
  let refused = 0;
  const windowStart = Date.now();
  for (let i = 0; i < 45; i++) {
    const r = await clients[i % clients.length].callTool({ name: 'list_notes', arguments: {} });
    if (r.isError && /rate_limited/.test(JSON.stringify(r.content))) refused++;
    else if (!r.isError) admitted++;
  }
  t.ok(admitted <= 20, `at most 20 of 45 calls a minute admitted over three processes (admitted ${admitted})`);
  t.ok(refused >= 25, `the rest refused as rate_limited (${refused})`);
  if (!failover) return;
  const epoch = (await epochsOf(c)).get(vault.id)!;
  await cutLease(c, vault.id);
  for (let i = 0; i < 100; i++) {
    if ((await epochsOf(c)).get(vault.id)! > epoch && (await c.ownerOf(vault.id))) break;
    await sleep(100);
  }
  // Sessions held by the old owner were closed with its lease: stateless 2026-07-28 clients now.
  const after = await Promise.all(c.processes.filter((p) => !p.exited).map((p) => modern.connect(p.url, vault.key)));
  let afterFailover = 0;
  for (let i = 0; i < 45; i++) {
    const r = await after[i % after.length].callTool({ name: 'list_notes', arguments: {} }).catch(() => undefined);
    if (r && !r.isError) afterFailover++;
  }
  const windowS = (Date.now() - windowStart) / 1000;
  const allowed = 20 + Math.floor((windowS * 20) / 60);
  const excess = Math.max(0, admitted + afterFailover - allowed);
  t.comment(
    `rate limit across a failover: ${admitted + afterFailover} calls admitted in ${windowS.toFixed(1)} s against ` +
      `a limit of 20 a minute (${allowed} with refill): a failover let ${excess} calls over the limit`,
  );
  t.ok(excess <= 20, `one failover exceeds the limit by at most one bucket (excess ${excess})`);
}

/** A revoked key is refused by every process within moments (NOTIFY). */
export async function checkRevocation(t: Checks, c: TestCluster, vault: ClusterVault): Promise<void> {
  const probe = async (base: string) => {
    const res = await postMcp(base, vault.key, LIST_TOOLS);
    await res.body?.cancel();
    return res.status;
  };
  for (const p of c.processes) t.not(await probe(p.url), 401, `${p.name} serves the key before revocation`);
  const revokedAt = Date.now();
  t.equal((await revokeApiKey(c.db.db, `key-${vault.name}`)).length, 1, 'the key is revoked');
  const latencies = await Promise.all(
    c.processes.map(async (p) => {
      while (Date.now() - revokedAt < 5000) if ((await probe(p.url)) === 401) return Date.now() - revokedAt;
      return -1;
    }),
  );
  t.ok(
    latencies.every((ms) => ms >= 0 && ms < 2500),
    `every process refuses the revoked key (${latencies.join(', ')} ms)`,
  );
}

/** A forged hop (no valid signature) is refused, never trusted. */
export async function checkForgedHop(t: Checks, c: TestCluster, vault: ClusterVault): Promise<void> {
  const forged = await postMcp(c.processes[0].url, vault.key, LIST_TOOLS, {
    'x-exocortex-hop': 'someone',
    'x-exocortex-ceiling': `${Date.now()} notes:write`,
    'x-exocortex-hop-signature': 'AAAA',
  });
  await forged.body?.cancel();
  t.equal(forged.status, 403, 'a forged forwarding header is refused');
}

/** A read-only deployment owns nothing and cannot widen a key: write tools are absent and refused. */
export async function checkReadOnlyDeployment(
  t: Checks,
  c: TestCluster,
  vault: ClusterVault,
  readablePath: string,
): Promise<void> {
  const ro = await c.addProcess('ro', {
    cluster: { ownVaults: false, leaseIntervalMs: 300 },
    families: {
      notes: { enabled: true, readOnly: true },
      search: { enabled: true, readOnly: true },
      graph: { enabled: false },
      tasks: { enabled: false },
      files: { enabled: false },
      'change-feed': { enabled: false },
      transfer: { enabled: false },
      history: { enabled: false },
    },
  });
  const roClient = await c.connect(ro.url, vault.key, 'read-only');
  const tools = (await roClient.listTools()).tools.map((x) => x.name);
  t.notOk(tools.includes('create_note'), 'no write tool is listed through the read-only deployment');
  t.notOk(tools.includes('get_backlinks'), 'no tool of a family the read-only deployment leaves off');
  t.ok(tools.includes('read_note'), 'read tools are listed');
  const roWrite = await roClient.callTool({ name: 'create_note', arguments: { path: 'ro.md', content: 'x' } });
  t.ok(roWrite.isError, 'a write through the read-only deployment is refused');
  const roRead = await roClient.callTool({ name: 'read_note', arguments: { path: readablePath } });
  t.notOk(roRead.isError, 'a read through the read-only deployment is answered by the owner');
  t.equal(await c.ownedBy(ro), 0, 'the read-only deployment owns no vault');
}
