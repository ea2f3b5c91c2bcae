// After tsc: bundle the host's two SDK modules (src/host/mcp/sdk.ts, sdk-node.ts) with the MCP SDK and zod,
// over what tsc wrote for them; copy the JSON tool schemas next to the compiled families (dist/schemas), since
// families locate their schemas relative to their own module file; then write the initialised PGlite data
// directory the package ships (dist/pglite/initdb-<key>.tar.gz), so a user's first start runs no initdb.
// The archive is made by a real initdb here, once per PGlite build (kept while its key matches).
import { cpSync, existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

// One bundle per module, their common code (the SDK's core, zod) in shared chunks, so that a process that
// loads both still holds one instance of each SDK class. Node's built-ins stay imports. The bundled packages
// stay dependencies (the sources and the tests import them), so a package install still carries their licences.
const SDK_CHUNKS = 'dist/src/host/mcp/sdk-chunks';
rmSync(SDK_CHUNKS, { recursive: true, force: true });
await build({
  entryPoints: ['src/host/mcp/sdk.ts', 'src/host/mcp/sdk-node.ts'],
  outdir: 'dist/src/host/mcp',
  chunkNames: 'sdk-chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  allowOverwrite: true,
  // Maps like tsc's for the rest of dist/ (the package leaves them out), and over tsc's maps for these two.
  sourcemap: true,
  logLevel: 'warning',
  plugins: [
    {
      name: 'lazy-validator',
      setup(b) {
        b.onResolve({ filter: /^@modelcontextprotocol\/server\/_shims$/ }, () => ({
          path: path.resolve('src/host/mcp/sdk-shims.ts'),
        }));
      },
    },
  ],
});

if (existsSync('schemas')) cpSync('schemas', 'dist/schemas', { recursive: true });
const { makeInitdbArchive } = await import('../dist/src/host/db/engines/pglite-template.js');
const t0 = performance.now();
const { file, made } = await makeInitdbArchive();
if (made) console.log(`postbuild: ${file} written in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
