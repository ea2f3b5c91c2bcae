// The panel marks an agent's edit that was undone (issue 43): after undo_changes or restore_revision put
// back the content it replaced (or deleted the note it created), its revision is shown as undone.
import t from 'tap';
import { undoneBy } from '../../../src/panel/routes-edits.js';

t.test('an edit undone by a later undo or restore is found; others are not', async (t) => {
  const revisions = [
    { revision: 'rev-5', kind: 'write', tool: 'undo_changes', content_hash: 'h1', previous_hash: 'h3' },
    { revision: 'rev-4', kind: 'write', tool: 'edit_note', content_hash: 'h3', previous_hash: 'h2' },
    { revision: 'rev-3', kind: 'write', tool: 'edit_note', content_hash: 'h2', previous_hash: 'h1' },
    { revision: 'rev-2', kind: 'create', tool: 'create_note', content_hash: 'h1', previous_hash: null },
  ];
  t.equal(undoneBy(revisions, 2)?.revision, 'rev-5', 'rev-3 (h1 → h2) is undone: rev-5 put h1 back');
  t.equal(undoneBy(revisions, 1), undefined, 'rev-4 replaced h2, which nothing put back');
  t.equal(undoneBy(revisions, 0), undefined, 'the undo itself is not undone');
  t.equal(undoneBy(revisions, 3), undefined, 'the create still stands');
  const deleted = [
    { revision: 'rev-9', kind: 'delete', tool: 'undo_changes', content_hash: 'h7', previous_hash: 'h7' },
    { revision: 'rev-8', kind: 'create', tool: 'create_note', content_hash: 'h7', previous_hash: null },
  ];
  t.equal(undoneBy(deleted, 1)?.revision, 'rev-9', 'a create undone by deleting the note');
});
