// defineTool: the one way a tool module is declared, typed from its schema's generated signature, so that
// `tsc` fails when the handler, its render or its paging disagree with the schema. Never changes the module.
import type { ToolFor, ToolSignature } from './types.js';

/**
 * `export const readNoteTool = defineTool<NotesTools['read_note']>({ handler: async (input, ctx) => …, render })`:
 * `input` is the schema's input type, and what the handler returns must be its output type.
 */
export function defineTool<S extends ToolSignature>(tool: ToolFor<S>): ToolFor<S> {
  return tool;
}
