// Host settings, sections `vaults` and `users`: vaults and users declared as code.
import { z } from 'zod';
import { accountName, userLimitsSchema } from './common.js';
import { section } from './section.js';

export const declaredVaultSchema = z
  .object({
    name: accountName.describe("The vault's name (what users are bound to and `exocortex vaults list` shows)."),
    path: z
      .string()
      .min(1)
      .describe(
        'Its root folder; it must exist. Relative paths resolve like vault.path. Roots may not overlap (one inside, equal to, or containing another, through symlinks and bind mounts).',
      ),
    shared: z
      .boolean()
      .default(false)
      .describe('Several users may be bound to it. Off by default: a second user on an unshared vault is refused.'),
  })
  .strict();

export const declaredUserSchema = z
  .object({
    name: accountName.describe("The user's name (`keys create --user NAME`)."),
    vault: accountName.describe(
      'The vault the user is bound to: a `vaults` entry, vault.name, or a vault made with `exocortex vaults add`.',
    ),
    admin: z
      .boolean()
      .default(false)
      .describe(
        "Marks the user as an administrator: in the panel (/admin) they see every user's vaults, keys and usage and reach the danger zone (`exocortex users admin NAME [--off]` for users not declared here).",
      ),
    disabled: z.boolean().default(false).describe('Refuse every key of this user at once, without deleting them.'),
    limits: userLimitsSchema
      .optional()
      .describe("This user's own limits, each over the operator's admission.perUser default (same keys)."),
  })
  .strict();

export const vaultsSection = section(
  'live',
  z
    .array(declaredVaultSchema)
    .default([])
    .describe(
      'Vaults served besides vault.path, declared as code (`name`, `path`, `shared`). The config file wins for what it names: the CLI refuses to change or remove these, and a vault of the same name made with the CLI but defined differently is a contradiction, refused by name at start and reload. Entries removed from the file stop being served and are deleted (refused while users the file does not declare still use them). Applied live on reload.',
    ),
);

export const usersSection = section(
  'live',
  z
    .array(declaredUserSchema)
    .default([])
    .describe(
      'Users declared as code (`name`, `vault`, `admin`, `disabled`), each bound to one vault. Same precedence as `vaults`: the file wins for the users it names; a user removed from the file is disabled. Single-user mode needs none: the implicit `operator` user is bound to vault.path.',
    ),
);
