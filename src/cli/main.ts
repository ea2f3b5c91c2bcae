// The exocortex command line's entry. A plain `exocortex stdio [--config FILE]` goes straight to serve.ts's
// runStdio without the command parser and the commands' modules: a desktop client starts it on every
// launch. Beside a running server it relays (stdio-relay.ts) and loads nothing else; served here, it answers
// initialize before the settings schema and the host load. Its relay settings come from the config's card
// when one matches (relay-card.ts: no YAML). Everything else, and a config whose relay settings are refused
// (read again and reported there), is program.ts's.

import module from 'node:module';
import path from 'node:path';
import { userCacheDir } from '../host/settings/paths.js';

/**
 * Node 22.1 and later keep V8's compiled code of the modules it loads (ours and our dependencies') between
 * runs, in the user's cache directory: a CLI command, a relay and a stdio server start sooner from the
 * second run on. Node 20 has no such cache (a no-op). NODE_COMPILE_CACHE, if set, is Node's own choice of
 * directory and stays so; NODE_DISABLE_COMPILE_CACHE=1 turns it off.
 */
function enableCompileCache(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const enable = (module as { enableCompileCache?: (dir: string) => { directory?: string } }).enableCompileCache;
  if (!enable || env.NODE_COMPILE_CACHE !== undefined) return undefined;
  const dir = path.join(userCacheDir(env), 'compile-cache');
  try {
    return enable(dir).directory;
  } catch {
    return undefined; // an unwritable home: start without it
  }
}

/** The config file of a plain `stdio [--config FILE]` (undefined: the default one), or null for anything else. */
function plainStdio(args: readonly string[]): { config?: string } | null {
  if (args[0] !== 'stdio') return null;
  if (args.length === 1) return {};
  if (args.length === 2 && args[1].startsWith('--config=') && args[1].length > 9) return { config: args[1].slice(9) };
  if (args.length === 3 && (args[1] === '--config' || args[1] === '-c')) return { config: args[2] };
  return null;
}

/**
 * A plain `exocortex stdio`: relayed to the running server, or served here (serve.ts), without the command
 * parser or the commands' modules. False when its relay settings are refused: program.ts reads them again
 * and reports the refusal as every command does.
 */
async function plainStdioRun(config: string | undefined): Promise<boolean> {
  let relay;
  try {
    relay = await (await import('../host/settings/relay-card.js')).relaySettings({ file: config });
  } catch {
    return false;
  }
  const [{ runStdio }, { exitWith }] = await Promise.all([import('./serve.js'), import('./exit.js')]);
  await runStdio(config, relay).catch(exitWith);
  return true;
}

enableCompileCache();
const stdio = plainStdio(process.argv.slice(2));
if (!(stdio && (await plainStdioRun(stdio.config)))) await import('./program.js');
