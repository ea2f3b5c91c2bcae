// `exocortex init`: writes the user's config file ($XDG_CONFIG_HOME/exocortex/config.yaml) from flags, or
// from answers at a terminal. Never overwrites an existing file without --force; touches no vault or database.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import YAML from 'yaml';
import { resolveFrom, userConfigFile, userDataDir } from '../host/settings/load.js';

export interface InitOptions {
  readonly vault?: string;
  readonly port?: string;
  readonly publicUrl?: string;
  readonly file?: string;
  readonly force?: boolean;
}

async function ask(question: string, fallback: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = (await rl.question(`${question} [${fallback}]: `)).trim();
    return answer || fallback;
  } finally {
    rl.close();
  }
}

/** Exit status: 0 written, 2 refused (file exists, no vault given and no terminal to ask at). */
export async function runInit(o: InitOptions): Promise<number> {
  const file = o.file ?? userConfigFile();
  if (existsSync(file) && !o.force) {
    process.stderr.write(`exocortex: ${file} exists; pass --force to replace it\n`);
    return 2;
  }
  const interactive = process.stdin.isTTY === true;
  let vault = o.vault;
  if (!vault && interactive) vault = await ask('Vault folder (your Obsidian vault)', path.join(userDataDir(), 'vault'));
  if (!vault) {
    process.stderr.write('exocortex: init needs --vault <folder> (no terminal to ask at)\n');
    return 2;
  }
  const port = o.port ?? (interactive && !o.vault ? await ask('Port', '3737') : '3737');
  if (!/^\d+$/.test(port) || Number(port) > 65535) {
    process.stderr.write(`exocortex: --port ${port} is not a port number\n`);
    return 2;
  }
  const publicUrl = o.publicUrl ?? (interactive && !o.vault ? await ask('Public URL (empty: local only)', '') : '');
  const config = {
    vault: { path: resolveFrom(process.cwd(), vault), name: 'vault' },
    server: { host: '127.0.0.1', port: Number(port), publicUrl: publicUrl || null },
    database: { url: `pglite:${path.join(userDataDir(), 'db')}` },
    families: {},
    plugins: [],
  };
  mkdirSync(path.dirname(file), { recursive: true });
  const header =
    '# Written by `exocortex init`. Every key is documented in docs/configuration.md of the package;\n' +
    '# override any value with EXO_<PATH_IN_UPPER_SNAKE>. A public URL also needs server.host: 0.0.0.0 (or a proxy).\n';
  writeFileSync(file, header + YAML.stringify(config), { mode: 0o600 });
  process.stderr.write(`exocortex: wrote ${file}\n`);
  return 0;
}
