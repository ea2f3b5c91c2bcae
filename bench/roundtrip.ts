// bench/roundtrip: tool calls per second for a trivial read tool (the fixture family's `echo`),
// over stateful Streamable HTTP with 1 and 16 concurrent clients, and over stdio with 1 client.
// The server runs in its own process (tsx loader, same code as the build), the clients in this one.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { benchEnvironment, ECHO_FAMILY, machine, ROOT } from './lib/setup.js';

const SECONDS = Number(process.env.SECONDS ?? 5);
const CLI = path.join(ROOT, 'src/host/cli/main.ts');

async function startHttpServer(configFile: string): Promise<{ child: ChildProcess; url: string; key: string }> {
  const key = await new Promise<string>((resolve, reject) => {
    const c = spawn(process.execPath, ['--import', 'tsx', CLI, 'keys', 'create', '--name', 'bench', '--scope', 'read', '--config', configFile], { cwd: ROOT });
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.on('exit', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error('keys create failed'))));
  });
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'serve', '--config', configFile], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const url = await new Promise<string>((resolve) => {
    let err = '';
    child.stderr!.on('data', (d) => {
      err += d;
      const m = /"url":"(http:\/\/[^"]+)\/mcp"/.exec(err);
      if (m) resolve(m[1]);
    });
  });
  return { child, url, key };
}

async function drive(clients: Client[], seconds: number): Promise<number> {
  const end = performance.now() + seconds * 1000;
  let calls = 0;
  await Promise.all(
    clients.map(async (c) => {
      while (performance.now() < end) {
        const r = await c.callTool({ name: 'echo', arguments: { text: 'ping' } });
        if (r.isError) throw new Error(JSON.stringify(r.content));
        calls++;
      }
    }),
  );
  return calls / seconds;
}

console.log(`# machine: ${machine()}; server and clients share the 2 cores; ${SECONDS} s per figure after 1 s warm-up`);
const { configFile } = await benchEnvironment({ plugins: [ECHO_FAMILY], log: { level: 'info' } });
const server = await startHttpServer(configFile);
try {
  for (const n of [1, 16]) {
    const clients = await Promise.all(
      Array.from({ length: n }, async () => {
        const c = new Client({ name: 'bench', version: '1' });
        await c.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${server.key}` } } }));
        return c;
      }),
    );
    await drive(clients, 1);
    console.log(`roundtrip_http_${n}_clients: ${(await drive(clients, SECONDS)).toFixed(0)} calls/s`);
    await Promise.all(clients.map((c) => c.close()));
  }
} finally {
  server.child.kill('SIGTERM');
}

const stdio = new Client({ name: 'bench', version: '1' });
await stdio.connect(new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', CLI, 'stdio', '--config', configFile], cwd: ROOT, stderr: 'ignore' }));
await drive([stdio], 1);
console.log(`roundtrip_stdio_1_client: ${(await drive([stdio], SECONDS)).toFixed(0)} calls/s`);
await stdio.close();
