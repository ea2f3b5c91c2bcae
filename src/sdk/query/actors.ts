// Who made a change, as the change feed and history record it (`actor_kind`): an agent through a tool (api_key,
// oauth, operator, test), or a person acting directly — an edit from outside the server (`human`: Obsidian, sync)
// or the operator panel (`panel`: a signed-in user's restore or undo). "Agent changes" (get_changes by: agents,
// undo_changes) are the first kind only, so an undo from the panel never reverts a person's own restore.
import { sql, type RawBuilder } from 'kysely';
import { textArray } from './sql-params.js';

/** Actor kinds that are people acting directly, not agents. */
export const PERSON_ACTOR_KINDS: readonly string[] = ['human', 'panel'];

export function isAgentActor(kind: string): boolean {
  return !PERSON_ACTOR_KINDS.includes(kind);
}

/** `actor_kind` is an agent's (for a WHERE clause over a table with that column). */
export function agentActorSql(column = 'actor_kind'): RawBuilder<unknown> {
  return sql`${sql.ref(column)} <> ALL(${textArray(PERSON_ACTOR_KINDS)})`;
}
