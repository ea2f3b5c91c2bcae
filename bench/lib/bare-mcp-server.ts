// The baseline for bench/roundtrip: the MCP SDK's own server with one echo tool and nothing else (no
// auth, admission, audit or families), served the way Exocortex serves: 2026-07-28 through the SDK's
// per-request handler, 2025-era clients through sessions. `http` prints its URL on stdout; `stdio`
// serves stdin/stdout.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { NodeStreamableHTTPServerTransport, toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, isInitializeRequest, isLegacyRequest, McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod/v4';

function build(): McpServer {
  const server = new McpServer({ name: 'bare', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Echo', inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({
      content: [{ type: 'text', text: `echo: ${text}` }],
      structuredContent: { text, length: text.length },
    }),
  );
  return server;
}

if (process.argv[2] === 'stdio') {
  serveStdio(build);
} else {
  const modern = toNodeHandler(createMcpHandler(build, { legacy: 'reject' }));
  const sessions = new Map<string, NodeStreamableHTTPServerTransport>();
  const readBody = (req: http.IncomingMessage) =>
    new Promise<unknown>((resolve) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => resolve(chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined));
    });
  const server = http.createServer(async (req, res) => {
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    const sid = req.headers['mcp-session-id'];
    if (
      req.method === 'POST' &&
      !(await isLegacyRequest(
        new Request(`http://x${req.url}`, { method: 'POST', headers: req.headers as Record<string, string> }),
        body,
      ))
    ) {
      return modern(req, res, body);
    }
    if (typeof sid === 'string' && sessions.has(sid)) return sessions.get(sid)!.handleRequest(req, res, body);
    if (isInitializeRequest(body)) {
      const transport: NodeStreamableHTTPServerTransport = new NodeStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void sessions.set(id, transport),
      });
      await build().connect(transport);
      return transport.handleRequest(req, res, body);
    }
    res.writeHead(400).end();
  });
  server.listen(0, '127.0.0.1', () => console.log(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`));
}
