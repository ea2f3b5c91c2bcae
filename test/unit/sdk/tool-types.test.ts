// Schemas and handlers cannot drift: the generated tool types are current, the type test (tool-types.test-d.ts)
// compiles with every expected error, and a handler that disagrees with its schema fails tsc.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { typescriptArgs } from '../../../src/host/testing/cli.js';

// Two generator runs and one compiler run: minutes on a loaded machine.
t.setTimeout(600_000);

const root = path.resolve(import.meta.dirname, '../../..');
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const gen = (...args: string[]) =>
  spawnSync(process.execPath, [...typescriptArgs(), path.join(root, 'scripts/gen-types.ts'), ...args], {
    cwd: root,
    encoding: 'utf8',
  });

/** tsc --noEmit over `files` with the repository's compiler options, from a scratch folder (an ESM package). */
function typecheck(files: string[]): { status: number | null; out: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'exo-tool-types-'));
  try {
    writeFileSync(path.join(dir, 'package.json'), '{ "type": "module" }\n');
    writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        extends: path.join(root, 'tsconfig.json'),
        compilerOptions: { noEmit: true, rootDir: '/', typeRoots: [path.join(root, 'node_modules/@types')] },
        files,
        include: [],
      }),
    );
    const r = spawnSync(process.execPath, [tsc, '-p', dir], { cwd: dir, encoding: 'utf8' });
    return { status: r.status, out: `${r.stdout}${r.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

t.test('src/generated matches schemas/ (npm run gen)', async (t) => {
  const r = gen('--check');
  t.equal(r.status, 0, r.stderr);
});

t.test("the echo fixture's committed types match its schemas (npm run gen -- --family)", async (t) => {
  const r = gen('--family', 'test/fixtures/families/echo', '--check');
  t.equal(r.status, 0, r.stderr);
});

// One compiler run over the type test and two files that must fail (a handler that disagrees with its
// schema; a family setting read under a misspelt key): every error it prints is one of the two expected,
// so the type test compiles with each of its expected errors, and each wrong file fails where it is wrong.
const scratch = mkdtempSync(path.join(tmpdir(), 'exo-wrong-types-'));
t.teardown(() => rmSync(scratch, { recursive: true, force: true }));
writeFileSync(path.join(scratch, 'package.json'), '{ "type": "module" }\n');
const wrongHandler = path.join(scratch, 'wrong-handler.ts');
writeFileSync(
  wrongHandler,
  [
    `import { defineTool } from ${JSON.stringify(path.join(root, 'src/sdk/index.js'))};`,
    `import type { EchoTools } from ${JSON.stringify(path.join(root, 'test/fixtures/families/echo/generated/index.js'))};`,
    // echo's schema answers { text: string, length: integer }: this handler answers a count as text.
    `export const wrong = defineTool<EchoTools['echo']>({ handler: (input) => ({ text: input.text, length: 'four' }) });`,
    '',
  ].join('\n'),
);
const settingsReader = path.join(scratch, 'settings-reader.ts');
writeFileSync(
  settingsReader,
  [
    `import type { NotesSettings } from ${JSON.stringify(path.join(root, 'src/generated/notes/settings.js'))};`,
    // maxFrontmatterBytes has a default, so the validated section always holds it: a number, never undefined.
    'export const ok = (s: NotesSettings): number => s.maxFrontmatterBytes + s.read.maxChars;',
    'export const wrong = (s: NotesSettings): number => s.maxFrontmaterBytes;',
    '',
  ].join('\n'),
);
const checked = typecheck([path.join(root, 'test/unit/sdk/tool-types.test-d.ts'), wrongHandler, settingsReader]);
const errors = checked.out.split('\n').filter((line) => /error TS\d+/.test(line));

t.test('the type test compiles, each expected error included', async (t) => {
  t.not(checked.status, 0, 'tsc ran and refused the two wrong files');
  t.same(
    errors.filter((line) => !/(wrong-handler|settings-reader)\.ts\(/.test(line)),
    [],
    'no error outside the two wrong files',
  );
});

t.test('a handler that disagrees with its schema fails tsc', async (t) => {
  const own = errors.filter((line) => line.includes('wrong-handler.ts('));
  t.equal(own.length, 1, 'one error, where the file is wrong', { output: checked.out });
  t.match(own[0], /wrong-handler\.ts\(3,\d+\): error TS2322: Type 'string' is not assignable to type 'number'/);
});

t.test(
  "a family's settings type follows its schema: a key with a default is always there, an unknown key fails tsc",
  async (t) => {
    const own = errors.filter((line) => line.includes('settings-reader.ts('));
    t.equal(own.length, 1, 'one error, where the file is wrong', { output: checked.out });
    t.match(own[0], /settings-reader\.ts\(3,\d+\): error TS2551: Property 'maxFrontmaterBytes' does not exist/);
  },
);
