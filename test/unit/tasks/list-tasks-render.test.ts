// list_tasks' text: a tag written inline in the task's text is shown once (the text keeps it), and tags
// the text does not show (e.g. inherited ones) are appended.
import t from 'tap';
import listTasks from '../../../plugins/tasks/tools/list_tasks.js';

const row = {
  path: 'a.md',
  line: 3,
  status: ' ',
  status_type: 'todo',
  text: 'Write the report #work #Urgent',
  due: null,
  scheduled: null,
  start: null,
  done: null,
  cancelled: null,
  priority: null,
  recurrence: null,
  heading_path: null,
};

t.test('inline tags are not printed twice', async (t) => {
  const text = listTasks.render!({
    total: 1,
    shown: 1,
    not_scanned: 0,
    not_indexable: 0,
    index_pending: 0,
    tasks: [{ ...row, tags: ['work', 'urgent', 'project'] }],
    next_cursor: null,
  } as never);
  const line = text.split('\n').find((l) => l.startsWith('- ['))!;
  t.equal(line.match(/#work/g)?.length, 1, line);
  t.equal(line.match(/#urgent/gi)?.length, 1, line);
  t.match(line, /#project/, 'a tag the text does not show is still listed');
});
