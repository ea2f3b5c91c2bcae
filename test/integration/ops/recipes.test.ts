// The deployment recipes in deploy/ and docs/operations.md, run here: the systemd unit passes
// `systemd-analyze verify`, the nginx server block passes `nginx -t` (with a throwaway certificate), and
// the embedded database's backup procedure (stop, copy the data directory, start from the copy) brings
// back the notes' index, the API keys and the change feed. Tools that are not installed skip their part.
import t from 'tap';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { textOf } from '../../../src/host/testing/testkit.js';
import { createApiKey } from '../../../src/host/auth/api-keys.js';
import { Host } from '../../../src/host/host.js';
import { createLogger } from '../../../src/host/log/logger.js';
import { loadSettings } from '../../../src/host/settings/load.js';
import { pgliteTemplate, startTestServer } from '../../../src/host/testing/harness.js';
import { postgresAvailable, startPostgres } from '../../../src/host/testing/postgres-server.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
const tmp = mkdtempSync(path.join(os.tmpdir(), 'exo-recipes-'));
t.teardown(() => rmSync(tmp, { recursive: true, force: true }));

t.test(
  'deploy/exocortex.service passes systemd-analyze verify',
  { skip: !has('systemd-analyze') && 'systemd-analyze is not installed' },
  async (t) => {
    // verify checks that ExecStart's binary exists; point it at this checkout's bin for the check (the
    // packaging test runs the same line against the installed package).
    const unit = readFileSync(path.join(root, 'deploy/exocortex.service'), 'utf8').replace(
      '/usr/local/bin/exocortex',
      path.join(root, 'bin', 'exocortex.js'),
    );
    const file = path.join(tmp, 'exocortex.service');
    writeFileSync(file, unit);
    const r = spawnSync('systemd-analyze', ['verify', '--man=no', file], { encoding: 'utf8' });
    // Lines about the exocortex user missing on this machine are not the unit's syntax.
    const problems = (r.stderr ?? '')
      .split('\n')
      .filter((l) => l.trim() && !/exocortex\.service: (Failed to|Unit configured to use)|user/i.test(l));
    t.same(problems, [], 'no complaint about the unit');
    t.match(unit, /ProtectSystem=strict/);
  },
);

t.test('deploy/nginx.conf passes nginx -t', { skip: !has('nginx') && 'nginx is not installed' }, async (t) => {
  const dir = path.join(tmp, 'nginx');
  mkdirSync(path.join(dir, 'logs'), { recursive: true });
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      '/CN=vault.example.org',
      '-days',
      '1',
      '-keyout',
      path.join(dir, 'key.pem'),
      '-out',
      path.join(dir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  const server = readFileSync(path.join(root, 'deploy/nginx.conf'), 'utf8')
    .replace('/etc/ssl/exocortex/fullchain.pem', path.join(dir, 'cert.pem'))
    .replace('/etc/ssl/exocortex/privkey.pem', path.join(dir, 'key.pem'))
    .replace('listen 443', 'listen 127.0.0.1:8443');
  writeFileSync(path.join(dir, 'server.conf'), server);
  writeFileSync(
    path.join(dir, 'nginx.conf'),
    `pid ${dir}/nginx.pid;\nerror_log stderr;\nevents {}\nhttp {\n  access_log off;\n  include ${dir}/server.conf;\n}\n`,
  );
  const r = spawnSync('nginx', ['-t', '-p', dir, '-c', path.join(dir, 'nginx.conf')], { encoding: 'utf8' });
  t.equal(r.status, 0, r.stderr);
  t.match(r.stderr, /syntax is ok/);
});

t.test(
  "deploy/Caddyfile adapts cleanly (caddy adapt: parsed and turned into Caddy's JSON, nothing started)",
  { skip: !has('caddy') && 'caddy is not installed' },
  async (t) => {
    const r = spawnSync('caddy', ['adapt', '--config', path.join(root, 'deploy/Caddyfile'), '--adapter', 'caddyfile'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    t.equal(r.status, 0, r.stderr);
    t.notMatch(r.stderr ?? '', /WARN|not formatted/i, 'no warning (formatting included)');
    const json = JSON.parse(r.stdout) as {
      apps: {
        http: {
          servers: Record<
            string,
            { routes: Array<{ handle: Array<{ routes?: Array<{ handle: Array<Record<string, unknown>> }> }> }> }
          >;
        };
      };
    };
    const proxy = Object.values(json.apps.http.servers)[0].routes[0].handle[0].routes?.[0].handle[0];
    t.equal(proxy?.handler, 'reverse_proxy');
    t.equal(proxy?.flush_interval, -1, 'events are flushed at once (SSE answers and listen streams)');
    t.match(JSON.stringify(proxy?.upstreams), /127\.0\.0\.1:3737/);
  },
);

// Docker cannot run here: the Dockerfile and the compose file are linted instead of built.
t.test("the Dockerfile lints clean (dockerfile-utils, the Docker language server's checks)", async (t) => {
  const { validate } = await import('dockerfile-utils');
  const text = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
  const problems = validate(text).map((d) => `line ${d.range.start.line + 1}: ${d.message}`);
  t.same(problems, [], 'no diagnostics');
  t.match(text, /^USER exocortex$/m, 'it runs as a non-root user');
  t.match(text, /^HEALTHCHECK /m);
  // The image is the package: the packed tarball installed the way the packaging test installs it (no
  // install scripts, so no compiler), and nothing else of the checkout in the build context.
  t.match(text, /^COPY exocortex-\*\.tgz \/tmp\/$/m, 'the packed tarball is what enters the image');
  t.match(text, /npm install -g --ignore-scripts --omit=dev .*\/tmp\/exocortex-\*\.tgz/, 'installed without scripts');
  t.notMatch(
    text.replace(/^#.*$/gm, ''),
    /g\+\+|node-gyp|npm ci|^COPY (src|native|plugins) /m,
    'no build from source in the image',
  );
  t.match(text, /^ENTRYPOINT \["exocortex"\]$/m, "it runs the package's command");
  const ignore = readFileSync(path.join(root, '.dockerignore'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('#'));
  t.same(ignore, ['*', '!exocortex-*.tgz'], '.dockerignore lets only the tarball into the build context');
});

t.test('deploy/compose.yaml (Exocortex with PostgreSQL and pgvector) passes dclint', async (t) => {
  const r = spawnSync(
    process.execPath,
    [path.join(root, 'node_modules/dclint/bin/dclint.cjs'), path.join(root, 'deploy/compose.yaml')],
    { encoding: 'utf8' },
  );
  t.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  t.notMatch(`${r.stdout}${r.stderr}`, /warning|error/, 'no warnings either');
  const compose = YAML.parse(readFileSync(path.join(root, 'deploy/compose.yaml'), 'utf8')) as {
    services: Record<string, { environment?: Record<string, string>; ports?: string[] }>;
  };
  t.match(
    compose.services.exocortex.environment?.EXO_DATABASE_URL,
    /^postgres:\/\/.*@postgres:5432\//,
    'Exocortex uses the compose PostgreSQL',
  );
  t.ok(
    compose.services.exocortex.ports?.every((p) => p.startsWith('127.0.0.1:')),
    'published on loopback only (a reverse proxy fronts it)',
  );
});

t.test('backup and restore of the embedded database: stop, copy ./data, start from the copy', async (t) => {
  t.setTimeout(300_000);
  const dir = path.join(tmp, 'server');
  mkdirSync(path.join(dir, 'vault'), { recursive: true });
  writeFileSync(path.join(dir, 'vault', 'Kept.md'), '# Kept\n\nbefore the backup\n');
  cpSync(await pgliteTemplate(), path.join(dir, 'data', 'db'), { recursive: true });
  const configFile = path.join(dir, 'config.yaml');
  writeFileSync(
    configFile,
    YAML.stringify({
      vault: { path: path.join(dir, 'vault') },
      database: { url: `pglite:${path.join(dir, 'data', 'db')}` },
      server: { host: '127.0.0.1', port: 0 },
      auth: { mintAdminKeyOnFirstStart: false },
      log: { level: 'silent' },
    }),
  );
  const start = () =>
    Host.start({
      settings: loadSettings({ file: configFile, env: {}, cwd: dir }),
      http: true,
      builtinDir: path.join(root, 'plugins'),
      log: createLogger('silent'),
    });
  const connect = async (host: Host, key: string) => {
    const client = new Client({ name: 'backup-test', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${host.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    return client;
  };

  const first = await start();
  const key = (
    await createApiKey(first.database.db, { name: 'kept', scope: 'readwrite', vaultId: first.vaultHandle.id })
  ).raw;
  const client = await connect(first, key);
  t.notOk(
    (
      await client.callTool({
        name: 'create_note',
        arguments: { path: 'Written.md', content: '# Written\n\nby an agent\n' },
      })
    ).isError,
  );
  await client.close();
  await first.close(); // the procedure: stop the server (`systemctl stop exocortex`), then copy ./data
  const backup = path.join(tmp, 'backup-data');
  cpSync(path.join(dir, 'data'), backup, { recursive: true });
  rmSync(path.join(dir, 'data'), { recursive: true, force: true }); // the disk is lost
  cpSync(backup, path.join(dir, 'data'), { recursive: true }); // restore: copy it back and start

  const again = await start();
  t.teardown(() => again.close());
  const restored = await connect(again, key);
  t.teardown(() => restored.close());
  t.match(
    textOf(await restored.callTool({ name: 'read_note', arguments: { path: 'Written.md' } })),
    /by an agent/,
    'the key minted before the backup works',
  );
  const changes = textOf(await restored.callTool({ name: 'get_changes', arguments: { since: 'ev:0', limit: 50 } }));
  t.match(changes, /Written\.md/, 'the change feed came back with the data directory');
});

t.test(
  'backup and restore of a PostgreSQL database with pg_dump and pg_restore',
  { skip: postgresAvailable() ? false : 'PostgreSQL 15 server binaries not installed' },
  async (t) => {
    t.setTimeout(300_000);
    const pg = await startPostgres();
    t.teardown(() => pg.stop());
    const server = await startTestServer({
      builtinDir: path.join(root, 'plugins'),
      config: { database: { url: pg.url } },
    });
    const client = await server.connect();
    t.notOk(
      (await client.callTool({ name: 'create_note', arguments: { path: 'In PG.md', content: '# In PG\n' } })).isError,
    );
    const key = server.key;
    await server.host.audit.flush();
    // The documented commands, while the server runs: a dump, then a restore into an empty database.
    const dump = path.join(tmp, 'exocortex.dump');
    execFileSync('pg_dump', ['--format=custom', `--file=${dump}`, pg.url]);
    await server.close();
    const restoredUrl = pg.url.replace(/\/postgres$/, '/restored');
    execFileSync('psql', [pg.url, '-qc', 'CREATE DATABASE restored']);
    execFileSync('pg_restore', ['--no-owner', `--dbname=${restoredUrl}`, dump]);
    // The restored database names the vault's root: the restored server serves the same path.
    const again = await startTestServer({
      builtinDir: path.join(root, 'plugins'),
      config: { database: { url: restoredUrl }, vault: { path: server.vaultDir } },
    });
    t.teardown(() => again.close());
    const restored = await again.connect({ key });
    t.teardown(() => restored.close());
    const changes = textOf(await restored.callTool({ name: 'get_changes', arguments: { since: 'ev:0', limit: 50 } }));
    t.match(changes, /In PG\.md/, 'the key and the change feed came back from the dump');
  },
);
