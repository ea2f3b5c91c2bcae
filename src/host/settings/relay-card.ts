// `exocortex stdio` needs four settings derived from the config file (relay.ts): where the admin socket is,
// the database directory, the vault and its name (a stdio served here names it in the instructions of its
// answer to initialize, before the rest of the settings load). Reading them takes the YAML parser,
// ~35 ms of a relay's ~150 ms start, and a desktop client starts a relay on every launch. So the first
// relay of a config (or `exocortex serve`, once up) writes what it derived to a card in the user's cache
// directory, and later relays read the card instead of the file while nothing it was derived from changed:
// - the config file: its path, device, inode, size, and modification and change times to the nanosecond;
// - the base directory its relative paths resolve against (the working directory, for a named file);
// - the EXO_ variables of the four keys;
// - this installation (its directory and version) and the card's format.
// A card holds derived local paths only, never the database URL or anything else of the file; with
// EXO_DATABASE_URL naming a server (it may carry a password) no card is written or read. The cards live in
// $XDG_CACHE_HOME/exocortex/relay-cards.json, the user's own (mode 0600), the most recent few configs.
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT, PACKAGE_VERSION } from '../package-info.js';
import { configLocation, envName, userCacheDir } from './paths.js';
import type { RelaySettings } from './relay.js';

/** Changes whenever what a card holds, or how it is derived, changes. */
const CARD_FORMAT = 2;
/** Configs remembered: a user has one or two; a test suite many. */
const MAX_CARDS = 8;
const KEYS = [
  envName(['database', 'url']),
  envName(['admin', 'socketPath']),
  envName(['vault', 'path']),
  envName(['vault', 'name']),
].map((name) => `EXO_${name}`);

interface Card {
  /** Everything the settings were derived from (see the header), as one string. */
  readonly key: string;
  readonly settings: RelaySettings;
}

export function relayCardsFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(userCacheDir(env), 'relay-cards.json');
}

/** What the settings derive from, or undefined where no card may stand for them. */
function cardKey(file: string, baseDir: string, env: NodeJS.ProcessEnv): string | undefined {
  const url = env[KEYS[0]];
  if (url !== undefined && !url.startsWith('pglite:')) return undefined;
  let identity: string;
  try {
    const s = statSync(file, { bigint: true });
    identity = `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
  } catch {
    return undefined; // no file: the parse says why
  }
  const install = [CARD_FORMAT, PACKAGE_VERSION, PACKAGE_ROOT];
  return JSON.stringify([...install, path.resolve(file), identity, baseDir, KEYS.map((k) => env[k])]);
}

const optionalText = (v: unknown): boolean => v === undefined || typeof v === 'string';

/** A card as written here; anything else in the file (a hand edit, another version's) is passed over. */
function isCard(c: unknown): c is Card {
  const s = (c as Card | null)?.settings;
  return (
    typeof (c as Card | null)?.key === 'string' &&
    typeof s === 'object' &&
    s !== null &&
    typeof s.file === 'string' &&
    typeof s.baseDir === 'string' &&
    typeof s.vaultPath === 'string' &&
    typeof s.vaultName === 'string' &&
    optionalText(s.socketPath) &&
    optionalText(s.databaseDir)
  );
}

function readCards(env: NodeJS.ProcessEnv): Card[] {
  try {
    const cards: unknown = JSON.parse(readFileSync(relayCardsFile(env), 'utf8'));
    return Array.isArray(cards) ? cards.filter(isCard) : [];
  } catch {
    return [];
  }
}

/** `card` first, then the others read before it was made (none of them with its key). */
function writeCard(card: Card, others: readonly Card[], env: NodeJS.ProcessEnv): void {
  const file = relayCardsFile(env);
  try {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const cards = [card, ...others].slice(0, MAX_CARDS);
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, JSON.stringify(cards), { mode: 0o600 });
    renameSync(temp, file);
  } catch {
    // an unwritable cache: the next relay reads the file again
  }
}

/**
 * The relay's settings for `options.file` (undefined: the default config): from its card when one
 * matches, else read from the config file (relay.ts, which refuses what the server's schema refuses) and
 * remembered on a new card.
 */
export async function relaySettings(
  options: { readonly file?: string; readonly cwd?: string; readonly env?: NodeJS.ProcessEnv } = {},
): Promise<RelaySettings> {
  const env = options.env ?? process.env;
  const { file, baseDir } = configLocation(options, env);
  const key = cardKey(file, baseDir, env);
  const cards = key === undefined ? [] : readCards(env);
  const card = cards.find((c) => c.key === key);
  if (card) return card.settings;
  const { loadRelaySettings } = await import('./relay.js');
  const settings = loadRelaySettings(options);
  if (key !== undefined) writeCard({ key, settings }, cards, env);
  return settings;
}
