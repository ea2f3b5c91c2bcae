// The exocortex command line: serve (default), stdio, migrate, index, keys, users, oauth, vaults, init, doctor
// (one file per command group), run by main.ts. Raw output meant for scripts (a new key) goes to stdout alone; the rest to stderr.
import { Command, InvalidArgumentError, Option } from 'commander';
import type { Settings } from '../host/settings/load.js';
import { PACKAGE_VERSION } from '../host/package-info.js';
import { exitWith, requireNative } from './exit.js';
import { keysCreate, keysList, keysRevoke } from './keys.js';
import { oauthClientsList, oauthClientsRevoke, oauthGrantsList, oauthGrantsRevoke } from './oauth.js';
import { runIndex, runMigrate, runServe, runStdio } from './serve.js';
import { usersAdd, usersAdmin, usersDisable, usersLimits, usersList, usersLoginLink, usersPasswd } from './users.js';
import { vaultsAdd, vaultsList, vaultsRemove } from './vaults.js';

const program = new Command();
program
  .name('exocortex')
  .addHelpText(
    'after',
    '\nFamilies add their own commands: exocortex <family> <command> (e.g. exocortex search rebuild-keyword).\n',
  )
  .description('MCP server that shares an Obsidian vault between AI agents and their human')
  .version(PACKAGE_VERSION);

/** Commands that run without the native core: they diagnose or write a config, and touch no vault or database. */
const WITHOUT_NATIVE = new Set(['doctor', 'init']);

program.hook('preAction', (_program, action) => {
  if (!WITHOUT_NATIVE.has(action.name())) requireNative();
});

const withConfig = (cmd: Command) =>
  cmd.addOption(
    new Option(
      '-c, --config <file>',
      'config file (YAML); default: $EXO_CONFIG, else ~/.config/exocortex/config.yaml if it exists, else the bundled config/default.yaml',
    ),
  );
/** Every setting, validated (loaded when a command needs them: `exocortex stdio` relaying reads only a few). */
const settingsOf = async (opts: { config?: string }): Promise<Settings> =>
  (await import('../host/settings/load.js')).loadSettings({ file: opts.config });

withConfig(
  program.command('serve', { isDefault: true }).description('serve the vault over Streamable HTTP (default command)'),
).action(async (opts) => {
  await runServe(await settingsOf(opts), opts.config);
});
withConfig(program.command('stdio').description('serve the vault over stdin/stdout as the local operator')).action(
  async (opts) => {
    await runStdio(opts.config);
  },
);
withConfig(
  program.command('migrate').description('apply database migrations of the host and every enabled family, then exit'),
).action(async (opts) => {
  await runMigrate(await settingsOf(opts));
});
withConfig(
  program
    .command('index')
    .description('run one full index pass over the vault with a progress bar, then print a summary'),
)
  .option('--rebuild', 're-read and re-derive every note, not only the ones that changed')
  .option('--vault <name>', 'the vault to index (see exocortex vaults list); default: the vault.path vault')
  .action(async (opts) => {
    await runIndex(await settingsOf(opts), { rebuild: opts.rebuild === true, vault: opts.vault });
  });
const keys = program.command('keys').description('manage API keys');
withConfig(keys.command('create').description('mint a key; prints only the raw key on stdout'))
  .requiredOption('--name <name>', 'a name to recognise the key by')
  .addOption(
    new Option(
      '--scope <scopes>',
      'what the key may do: read, readwrite, or per family <family>:read|write|* (space- or comma-separated, e.g. "read tasks:write")',
    ).default('read'),
  )
  .option('--expires <when>', 'expiry: a date (2027-01-31) or a duration (30d, 12h, 90m)')
  .option('--user <name>', 'the user the key belongs to (and whose vault it serves); default: the operator')
  .action(async (opts) => {
    await keysCreate(await settingsOf(opts), opts);
  });
withConfig(keys.command('list').description('list keys (never their secrets)')).action(async (opts) => {
  await keysList(await settingsOf(opts));
});
withConfig(keys.command('revoke').description('revoke a key by id, name or prefix').argument('<which>')).action(
  async (which: string, opts) => {
    await keysRevoke(await settingsOf(opts), which);
  },
);
const users = program.command('users').description('manage users: each is bound to one vault and owns keys');
withConfig(users.command('add').description('add a user bound to a vault').argument('<name>'))
  .requiredOption('--vault <vault>', 'the vault the user is bound to')
  .option('--admin', 'mark the user as an administrator')
  .option('--share', 'allow it when the vault already serves other users (marks the vault shared)')
  .action(async (name: string, opts) => {
    await usersAdd(await settingsOf(opts), { name, vault: opts.vault, admin: opts.admin, share: opts.share });
  });
withConfig(users.command('list').description('list users, their vault, state and key count')).action(async (opts) => {
  await usersList(await settingsOf(opts));
});
const count = (v: string) => {
  if (!/^\d+$/.test(v)) throw new InvalidArgumentError('a whole number (0: no limit of this kind for the user)');
  return Number(v);
};
withConfig(
  users
    .command('limits')
    .description("set a user's own limits over admission.perUser (over all their keys); with no option, show them")
    .argument('<name>'),
)
  .option('--calls-per-minute <n>', 'tool calls per minute over all their keys', count)
  .option('--writes-per-minute <n>', 'write-class calls per minute over all their keys', count)
  .option('--read-slots <n>', 'concurrent read-class calls', count)
  .option('--write-slots <n>', 'concurrent write-class calls', count)
  .option('--expensive-slots <n>', 'concurrent expensive-class calls', count)
  .option('--daily-quota <n>', 'tool calls per day', count)
  .option('--sessions <n>', 'open stateful MCP sessions', count)
  .option('--clear', 'drop the limits set before (the defaults apply again), then set the ones given')
  .action(async (name: string, opts) => {
    const concurrency = Object.fromEntries(
      [
        ['read', opts.readSlots],
        ['write', opts.writeSlots],
        ['expensive', opts.expensiveSlots],
      ].filter(([, v]) => v !== undefined),
    );
    const limits = Object.fromEntries(
      Object.entries({
        callsPerMinute: opts.callsPerMinute,
        writesPerMinute: opts.writesPerMinute,
        dailyQuota: opts.dailyQuota,
        sessions: opts.sessions,
        concurrency: Object.keys(concurrency).length ? concurrency : undefined,
      }).filter(([, v]) => v !== undefined),
    );
    await usersLimits(await settingsOf(opts), name, { limits, clear: opts.clear });
  });
withConfig(
  users
    .command('admin')
    .description('mark a user an administrator of the panel (/admin), or not with --off')
    .argument('<name>'),
)
  .option('--off', 'take the administrator mark away')
  .action(async (name: string, opts) => {
    await usersAdmin(await settingsOf(opts), name, opts.off !== true);
  });
withConfig(
  users.command('disable').description('disable a user: every one of their keys is refused at once').argument('<name>'),
).action(async (name: string, opts) => {
  await usersDisable(await settingsOf(opts), name);
});
withConfig(
  users
    .command('passwd')
    .description('set the password a user signs in with when a connector asks (OAuth); read from stdin')
    .argument('<name>'),
).action(async (name: string, opts) => {
  await usersPasswd(await settingsOf(opts), name);
});
withConfig(
  users
    .command('login-link')
    .description('mint a one-time sign-in code for the OAuth sign-in page (for users without a password)')
    .argument('<name>'),
).action(async (name: string, opts) => {
  await usersLoginLink(await settingsOf(opts), name);
});
const oauth = program.command('oauth').description('OAuth clients and grants of the embedded authorization server');
const clients = oauth
  .command('clients')
  .description('clients that registered (DCR) or hold grants (metadata documents)');
withConfig(clients.command('list').description('list OAuth clients')).action(async (opts) => {
  await oauthClientsList(await settingsOf(opts));
});
withConfig(
  clients
    .command('revoke')
    .description('remove a client and all its grants; their tokens are refused at once')
    .argument('<client-id>', 'the id `oauth clients list` shows (one that starts with - goes after --)'),
).action(async (id: string, opts) => {
  await oauthClientsRevoke(await settingsOf(opts), id);
});
const grants = oauth.command('grants').description('what users allowed which clients');
withConfig(grants.command('list').description('list OAuth grants')).action(async (opts) => {
  await oauthGrantsList(await settingsOf(opts));
});
withConfig(
  grants
    .command('revoke')
    .description('revoke a grant; its access and refresh tokens are refused at once')
    .argument(
      '<grant-id>',
      'the id `oauth grants list` shows (one that starts with - goes after --: `revoke -- -10Bj…`)',
    ),
).action(async (id: string, opts) => {
  await oauthGrantsRevoke(await settingsOf(opts), id);
});
const vaults = program
  .command('vaults')
  .description('manage vaults: a name and a root folder, each with its own index');
withConfig(
  vaults
    .command('add')
    .description('serve another vault root (it must exist and overlap no other vault)')
    .argument('<name>')
    .argument('<root>'),
)
  .option('--shared', 'several users may be bound to it')
  .action(async (name: string, root: string, opts) => {
    await vaultsAdd(await settingsOf(opts), name, root, { shared: opts.shared });
  });
withConfig(vaults.command('list').description('list vaults with their users and live status')).action(async (opts) => {
  await vaultsList(await settingsOf(opts));
});
withConfig(
  vaults.command('remove').description('stop serving a vault and drop its index (its files stay)').argument('<name>'),
)
  .option('--force', 'remove it even while users use it (they are disabled)')
  .action(async (name: string, opts) => {
    await vaultsRemove(await settingsOf(opts), name, { force: opts.force });
  });
program
  .command('init')
  .description('write the user config ($XDG_CONFIG_HOME/exocortex/config.yaml): vault folder, port, public URL')
  .option('--vault <folder>', 'the vault folder (asked at a terminal when missing)')
  .option('--port <port>', 'the HTTP port (default 3737)')
  .option('--public-url <url>', 'the https:// address clients use, when served beyond this machine')
  .option('-c, --config <file>', 'write this file instead')
  .option('--force', 'replace an existing file')
  .action(async (opts) => {
    const { runInit } = await import('./init.js');
    process.exitCode = await runInit({ ...opts, file: opts.config });
  });
withConfig(
  program.command('doctor').description('check the platform and configuration, and say how to fix what is wrong'),
).action(async (opts) => {
  const { runDoctor } = await import('./doctor.js');
  process.exitCode = await runDoctor(opts.config);
});

/** `exocortex <family> <command> [args] [--config FILE]`: anything that is not a host command. */
async function familyCommand(argv: string[]): Promise<boolean> {
  const first = argv[2];
  if (!first || first.startsWith('-') || first === 'help' || program.commands.some((c) => c.name() === first))
    return false;
  const rest = argv.slice(3);
  let config: string | undefined;
  const positional: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] === '--config' || rest[i] === '-c') config = rest[++i];
    else if (rest[i].startsWith('--config=')) config = rest[i].slice('--config='.length);
    else positional.push(rest[i]);
  }
  requireNative();
  const { runFamilyCommand } = await import('./family-command.js');
  process.exitCode = await runFamilyCommand(await settingsOf({ config }), first, positional[0], positional.slice(1));
  return true;
}

try {
  if (!(await familyCommand(process.argv))) await program.parseAsync(process.argv);
} catch (e) {
  exitWith(e);
}
