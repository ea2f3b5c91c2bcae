// The tasks family: an index contributor storing every checkbox task, and list_tasks over it.
// Declares settings and tables; writes notes only through the notes family's note-writer service.
import { defineFamily, INDEX, NOTE_WRITER, optional } from '../../src/sdk/index.js';
import type { TasksTools } from '../../src/generated/tasks/index.js';
import { tasksContributor } from './contributor.js';
import { tasksMigrations } from './migrations.js';
import listTasks from './tools/list_tasks.js';
import updateTask from './tools/update_task.js';

export default defineFamily<TasksTools>({
  name: 'tasks',
  description: 'Checkbox tasks across the vault, from the index (Tasks-plugin dates, priorities and statuses).',
  requires: [optional(INDEX), optional(NOTE_WRITER)],
  schemas: new URL('../../schemas/tasks/', import.meta.url),
  settings: {
    tasks: {
      type: 'object',
      properties: {
        listCap: { type: 'integer', minimum: 1, default: 500, description: 'Most tasks one list_tasks page returns.' },
        statuses: {
          type: 'object',
          default: {},
          description:
            'Extra status characters and their meaning, e.g. {"?": "todo", "!": "in_progress"} (overrides the vault\'s Tasks settings).',
          propertyNames: { minLength: 1, maxLength: 1 },
          additionalProperties: { enum: ['todo', 'in_progress', 'done', 'cancelled', 'other'] },
        },
      },
    },
  },
  migrations: tasksMigrations,
  indexers: [tasksContributor],
  tools: { list_tasks: listTasks, update_task: updateTask },
});
