// The defaults of the settings that say where things are (the database, the vault), apart from their zod
// sections so that `exocortex stdio` relaying to a running server reads them without loading zod
// (settings/relay.ts). The sections use these constants; test/unit/settings/relay.test.ts holds the two
// readings equal.

/** database.url when none is given. */
export const DEFAULT_DATABASE_URL = 'pglite:./data/db';
/** vault.path when none is given. */
export const DEFAULT_VAULT_PATH = './vault';
/** What database.url must start with. */
export const DATABASE_URL_PATTERN = /^(pglite:|postgres:\/\/|postgresql:\/\/)/;
/** vault.name when none is given (a stdio server served here names the vault before the schema loads). */
export const DEFAULT_VAULT_NAME = 'vault';
/** The longest vault.name (the schema's bound, and the relay's own check of it). */
export const VAULT_NAME_MAX_CHARS = 80;
