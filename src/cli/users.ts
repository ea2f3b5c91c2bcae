// exocortex users add | list | admin | disable | limits | passwd | login-link: users, each bound to one vault.
import type { UserView } from '../host/admin/account-operations.js';
import type { Settings } from '../host/settings/load.js';
import { loadAccounts, loadOAuth, reachOwner, withAccounts } from './owner.js';

export async function usersAdd(
  settings: Settings,
  opts: { name: string; vault: string; admin?: boolean; share?: boolean },
): Promise<void> {
  const { usersAddOp } = await loadAccounts();
  const input = { name: opts.name, vault: opts.vault, admin: opts.admin === true, share: opts.share === true };
  const user = await reachOwner(
    settings,
    (owner) => owner.post<{ user: UserView }>('/v1/users', input).then((r) => r.user),
    () => withAccounts(settings, (t) => usersAddOp(t, input)),
  );
  process.stderr.write(
    `added user ${user.name}, bound to the vault ${user.vault}; mint a key with: exocortex keys create --user ${user.name} --name NAME\n`,
  );
}

export async function usersList(settings: Settings): Promise<void> {
  const { usersListOp, renderUsers } = await loadAccounts();
  const users = await reachOwner(
    settings,
    (owner) => owner.get<{ users: UserView[] }>('/v1/users').then((r) => r.users),
    () => withAccounts(settings, (t) => usersListOp(t)),
  );
  process.stdout.write(renderUsers(users) + '\n');
}

export async function usersAdmin(settings: Settings, name: string, admin: boolean): Promise<void> {
  const { usersAdminOp } = await loadAccounts();
  const user = await reachOwner(
    settings,
    (owner) => owner.post<{ user: UserView }>('/v1/users/admin', { name, admin }).then((r) => r.user),
    () => withAccounts(settings, (t) => usersAdminOp(t, { name, admin })),
  );
  process.stderr.write(
    `user ${user.name} is ${user.admin ? 'now an administrator (sees every user in the panel at /admin)' : 'no longer an administrator'}\n`,
  );
}

export async function usersDisable(settings: Settings, name: string): Promise<void> {
  const { usersDisableOp } = await loadAccounts();
  const r = await reachOwner(
    settings,
    (owner) => owner.post<{ disabled: string; keys: number; sessionsClosed: number }>('/v1/users/disable', { name }),
    () => withAccounts(settings, (t) => usersDisableOp(t, name)),
  );
  process.stderr.write(
    `disabled user ${r.disabled}: its ${r.keys} key${r.keys === 1 ? ' is' : 's are'} refused from now on${r.sessionsClosed ? `, ${r.sessionsClosed} open sessions closed` : ''}\n`,
  );
}

export async function usersLimits(
  settings: Settings,
  name: string,
  input: { limits: Record<string, unknown>; clear?: boolean },
): Promise<void> {
  const { usersLimitsOp, renderLimits } = await loadAccounts();
  const body = { name, limits: input.limits, clear: input.clear === true };
  const user = await reachOwner(
    settings,
    (owner) => owner.post<{ user: UserView }>('/v1/users/limits', body).then((r) => r.user),
    () => withAccounts(settings, (t) => usersLimitsOp(t, body)),
  );
  process.stderr.write(
    `limits of user ${user.name}: ${renderLimits(user.limits)} (over admission.perUser; they apply from the next call)\n`,
  );
}

/** Read a password from stdin (a pipe, or a terminal with echo off), without its final newline. */
async function readPassword(prompt: string): Promise<string> {
  const stdin = process.stdin;
  if (stdin.isTTY) {
    process.stderr.write(prompt);
    stdin.setRawMode(true);
    stdin.resume();
    stdin.setEncoding('utf8');
    return new Promise((resolve, reject) => {
      let typed = '';
      const onData = (chunk: string) => {
        for (const ch of chunk) {
          if (ch === '\r' || ch === '\n') {
            stdin.setRawMode(false);
            stdin.pause();
            stdin.off('data', onData);
            process.stderr.write('\n');
            return resolve(typed);
          }
          if (ch === '\u0003') {
            stdin.setRawMode(false);
            return reject(new Error('cancelled'));
          }
          if (ch === '\u007f') typed = typed.slice(0, -1);
          else typed += ch;
        }
      };
      stdin.on('data', onData);
    });
  }
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

export async function usersPasswd(settings: Settings, name: string): Promise<void> {
  const { usersPasswdOp } = await loadOAuth();
  const input = { name, password: await readPassword(`password for ${name}: `) };
  const r = await reachOwner(
    settings,
    (owner) => owner.post<{ user: string }>('/v1/users/passwd', input),
    () => withAccounts(settings, (t) => usersPasswdOp(t, input)),
  );
  process.stderr.write(`set the sign-in password of ${r.user} (OAuth connectors sign in with it)\n`);
}

export async function usersLoginLink(settings: Settings, name: string): Promise<void> {
  const { usersLoginLinkOp } = await loadOAuth();
  const r = await reachOwner(
    settings,
    (owner) => owner.post<{ user: string; code: string; expiresAt: string }>('/v1/users/login-link', { name }),
    () => withAccounts(settings, (t) => usersLoginLinkOp(t, name)),
  );
  process.stdout.write(`${r.code}\n`);
  process.stderr.write(
    `one-time sign-in code for ${r.user}, usable once until ${r.expiresAt}: paste it on the sign-in page your connector opens\n`,
  );
}
