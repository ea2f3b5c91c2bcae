// Type test, compiled by tsc (npm run lint, and test/unit/sdk/tool-types.test.ts): a tool typed from its schema's
// generated signature does not compile when it disagrees with the schema. Each @ts-expect-error is a drift the
// compiler must catch; tsc fails on one that no longer errors. Never run: it only has to type-check.
import { defineFamily, defineTool, type ToolFor } from '../../../src/sdk/index.js';
import type { NotesTools } from '../../../src/generated/notes/index.js';
import type { EchoTools } from '../../fixtures/families/echo/generated/index.js';

type Echo = EchoTools['echo'];

// Agrees with schemas/echo.json: arguments and result are the generated ones, no annotation needed.
export const echo = defineTool<Echo>({
  handler: (input) => ({ text: input.text.repeat(input.repeat ?? 1), length: input.text.length }),
  render: (o) => `${o.text} (${o.length})`,
});

// An argument the schema does not declare.
// @ts-expect-error: 'shout' does not exist on EchoInput
defineTool<Echo>({ handler: (input) => ({ text: input.shout, length: 0 }) });

// A handler that asks for an argument the schema does not have (checked contravariantly, not bivariantly).
// @ts-expect-error: 'times' is missing in EchoInput
defineTool<Echo>({ handler: (input: { text: string; times: number }) => ({ text: input.text, length: input.times }) });

// A required result field missing.
// @ts-expect-error: 'length' is missing
defineTool<Echo>({ handler: (input) => ({ text: input.text }) });

// A result field of the wrong type.
// @ts-expect-error: length is a number in the schema
defineTool<Echo>({ handler: (input) => ({ text: input.text, length: String(input.text.length) }) });

// A result field the schema does not declare, from a handler that states its result type.
defineTool<Echo>({
  // @ts-expect-error: 'loud' is not in EchoOutput
  handler: (input): Echo['output'] => ({ text: input.text, length: 1, loud: true }),
});

// A render reading a field the result does not have.
// @ts-expect-error: 'chars' does not exist on EchoOutput
defineTool<Echo>({ handler: (input) => ({ text: input.text, length: 1 }), render: (o) => `${o.chars}` });

// Paging that names the result wrongly.
// @ts-expect-error: 'items' does not exist on EchoOutput
defineTool<Echo>({ handler: (input) => ({ text: input.text, length: 1 }), paging: { limit: 'repeat', size: (o) => o.items.length, next: () => undefined } });

// A built-in tool's module cannot stand in for another's.
declare const readNoteLines: ToolFor<NotesTools['read_note_lines']>;
// @ts-expect-error: read_note_lines requires start_line, which read_note's input lacks
export const readNote: ToolFor<NotesTools['read_note']> = readNoteLines;

declare const tools: { [K in keyof EchoTools]: ToolFor<EchoTools[K]> };
const { append_note, ...withoutAppend } = tools;

// A family typed by its tool map holds exactly its tools, each the one its schema describes.
export const family = defineFamily<EchoTools>({ name: 'echo', schemas: new URL('file:///schemas/'), tools });

// @ts-expect-error: append_note is missing
defineFamily<EchoTools>({ name: 'echo', schemas: new URL('file:///schemas/'), tools: withoutAppend });

// @ts-expect-error: a module typed for append_note under echo's name
defineFamily<EchoTools>({ name: 'echo', schemas: new URL('file:///schemas/'), tools: { ...tools, echo: append_note } });

// @ts-expect-error: 'shout' has no schema in the map
defineFamily<EchoTools>({ name: 'echo', schemas: new URL('file:///schemas/'), tools: { ...tools, shout: echo } });

// A family that names no map still takes any modules (third-party families written before generation).
export const untyped = defineFamily({ name: 'untyped', schemas: new URL('file:///schemas/'), tools: { anything: { handler: (input: { x: number }) => input.x } } });
