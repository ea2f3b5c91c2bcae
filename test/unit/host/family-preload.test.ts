// preloadFamilies: the host imports the families' modules while the database opens. It must import the
// built-ins and every configured plugin, and never reject: apply() imports them again and reports failures.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { preloadFamilies } from '../../../src/host/families/manager.js';

const seen = () => ((globalThis as { __exoPreloaded?: string[] }).__exoPreloaded ??= []);

t.test('imports built-ins and plugins, and resolves though some cannot be loaded', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-preload-'));
  t.teardown(() => delete (globalThis as { __exoPreloaded?: string[] }).__exoPreloaded);
  const mark = (name: string) => `(globalThis.__exoPreloaded ??= []).push(${JSON.stringify(name)});`;
  mkdirSync(path.join(dir, 'builtins', 'alpha'), { recursive: true });
  writeFileSync(path.join(dir, 'builtins', 'alpha', 'family.ts'), `${mark('alpha')}\nexport default {};\n`);
  writeFileSync(path.join(dir, 'throws.mjs'), `${mark('throws')}\nthrow new Error('fails at import');\n`);
  writeFileSync(path.join(dir, 'plain.mjs'), `${mark('plain')}\nexport default 42;\n`);

  await preloadFamilies(
    { host: { plugins: ['./throws.mjs', './plain.mjs', './missing.mjs', 'no-such-exocortex-family'] }, baseDir: dir },
    path.join(dir, 'builtins'),
  );
  t.same([...seen()].sort(), ['alpha', 'plain', 'throws'], 'each module that exists was evaluated once');

  // A module that failed stays failed for the apply() that follows: the preload hides nothing.
  await t.rejects(import(path.join(dir, 'throws.mjs')), /fails at import/);
});
