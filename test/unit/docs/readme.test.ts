// The README is the front door: short, every link inside the repository resolves, every command in its
// command table is one the CLI has, and the commands it shows for clients are the ones the tests run
// (the Inspector recipe: test/integration/host/inspector-cli.test.ts; the claude mcp add line: the
// first-start message).
import t from 'tap';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../../..');
const readme = readFileSync(path.join(root, 'README.md'), 'utf8');

t.test('readme.short: under 300 lines', async (t) => {
  t.ok(readme.split('\n').length < 300, `${readme.split('\n').length} lines`);
});

t.test('readme.links: every relative link names a file that exists', async (t) => {
  const links = [...readme.matchAll(/\]\(((?!https?:)[^)#]+)(?:#[^)]*)?\)/g)].map((m) => m[1]);
  t.ok(links.length > 5, 'the README links into docs/');
  for (const l of links) t.ok(existsSync(path.join(root, l)), l);
});

t.test('readme.commands: every exocortex command in the table is a CLI command', async (t) => {
  const main = readFileSync(path.join(root, 'src/cli/program.ts'), 'utf8');
  const known = new Set([...main.matchAll(/\.command\('([a-z-]+)'/g)].map((m) => m[1]));
  // `exocortex <family> <command>`: a built-in family's operator commands (search rebuild-keyword, history export).
  const families = new Set(
    readdirSync(path.join(root, 'plugins')).filter((f) => existsSync(path.join(root, 'plugins', f, 'family.ts'))),
  );
  const rows = readme.split('\n').filter((l) => l.startsWith('| `exocortex'));
  t.ok(rows.length >= 6, 'the command table is there');
  for (const row of rows) {
    for (const m of row.matchAll(/`exocortex ([a-z-]+)(?: ([a-z-]+))?/g)) {
      if (m[1].startsWith('<')) continue;
      t.ok(known.has(m[1]) || families.has(m[1]), `exocortex ${m[1]}`);
      if (m[1] === 'keys' && m[2]) t.ok(known.has(m[2]), `exocortex keys ${m[2]}`);
    }
  }
});

t.test('readme.clients: the client commands are the ones the server prints and the tests run', async (t) => {
  const commands = readFileSync(path.join(root, 'src/cli/serve.ts'), 'utf8');
  t.match(commands, 'claude mcp add --transport http exocortex ${url}/mcp --header "Authorization: Bearer ${key}"');
  t.match(
    readme,
    'claude mcp add --transport http exocortex http://127.0.0.1:3737/mcp --header "Authorization: Bearer exo_…"',
  );
  const inspector = readFileSync(path.join(root, 'test/integration/host/inspector-cli.test.ts'), 'utf8');
  t.match(inspector, '@modelcontextprotocol/inspector@2.12.0', 'the Inspector version the test installs');
  t.match(readme, '@modelcontextprotocol/inspector@2.12.0 --cli --method tools/list --');
  t.match(inspector, /'--transport',\s*'http',\s*'--server-url'/, 'the HTTP recipe is tested');
  t.match(inspector, /'--header',\s*`Authorization: Bearer/);
});

t.test('readme.node-and-clone: the recommended Node line, what Node 20 prints, how to run from a clone', async (t) => {
  t.match(readme, /recommended: 24, or 22 LTS/, 'names the recommended Node line');
  t.match(readme, /EBADENGINE/, 'says what npm ci prints on Node 20');
  t.match(readme, /oidc-provider WARNING: Unsupported runtime/, 'and what every start with OAuth prints');
  t.match(readme, /`npx exocortex …`/, 'says how to run exocortex from a clone');
  t.match(readme, /exocortex index \[--rebuild\] \[--vault NAME\]/, 'index takes --vault');
});
