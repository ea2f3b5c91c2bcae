// Scopes: the grammar a key's scope string follows, and what each grants per family.
import t from 'tap';
import { mayRead, mayWrite, parseScopes, scopeProblem, writesAnything } from '../../../src/sdk/scopes.js';

t.test('the grammar: read, readwrite, <family>:read|write|*, * for every family', async (t) => {
  t.same(parseScopes('read tasks:write'), ['read', 'tasks:write']);
  t.same(
    parseScopes('files:read,notes:*  files:read'),
    ['files:read', 'notes:*'],
    'commas and spaces separate; duplicates drop',
  );
  t.same(parseScopes('*:read'), ['*:read']);
  for (const bad of ['write', 'notes', 'notes:delete', 'Notes:read', 'a:b:c', '../x:read', 'notes:'])
    t.ok(scopeProblem(bad), `${bad} is refused`);
  t.throws(() => parseScopes(''), /no scope/);
  t.throws(() => parseScopes('read notes:admin'), /"admin" in "notes:admin"/);
});

t.test('what each scope grants', async (t) => {
  t.ok(mayRead(['read'], 'notes') && !mayWrite(['read'], 'notes'), 'read: every family, read only');
  t.ok(mayRead(['readwrite'], 'files') && mayWrite(['readwrite'], 'files'), 'readwrite: everything');
  const tasksWriter = ['read', 'tasks:write'];
  t.ok(
    mayWrite(tasksWriter, 'tasks') && !mayWrite(tasksWriter, 'notes') && mayRead(tasksWriter, 'notes'),
    'read everything, write only tasks',
  );
  const filesOnly = ['files:read'];
  t.ok(
    mayRead(filesOnly, 'files') && !mayRead(filesOnly, 'notes') && !mayWrite(filesOnly, 'files'),
    'files:read reaches only the files family',
  );
  t.ok(
    mayRead(['transfer:*'], 'transfer') && mayWrite(['transfer:*'], 'transfer') && !mayRead(['transfer:*'], 'notes'),
  );
  t.ok(mayWrite(['*:write'], 'graph') && mayRead(['*:write'], 'graph'), 'write includes read');
  t.notOk(writesAnything(['read', 'files:read']));
  t.ok(writesAnything(['read', 'tasks:write']));
});
