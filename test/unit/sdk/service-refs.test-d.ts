// Type test, compiled by tsc (test/unit/sdk/service-refs.test.ts): a service reached by its typed ref is typed
// without a cast; a wrong use does not compile. Never run: it only has to type-check.
import { defineFamily, EMBEDDINGS, INDEX, NOTE_WRITER, optional, serviceRef, type IndexService, type NoteWriter, type ToolContext } from '../../../src/sdk/index.js';
import type { EmbeddingsService } from '../../../src/sdk/index.js';

declare const ctx: ToolContext;

export const index: IndexService = ctx.service(INDEX);
export const writer: NoteWriter = ctx.service(NOTE_WRITER);
export const embeddings: EmbeddingsService = ctx.service(EMBEDDINGS);

interface Greeter { greet(name: string): string }
const GREETER = serviceRef<Greeter>('greeter');
export const greeting: string = ctx.service(GREETER).greet('x');

// @ts-expect-error: the ref says NoteWriter, not IndexService
export const wrong: IndexService = ctx.service(NOTE_WRITER);
// @ts-expect-error: a Greeter has no count()
ctx.service(GREETER).count();

// The deprecated string form still compiles (third-party families written before refs).
export const legacy = ctx.service<IndexService>('index');

export const fam = defineFamily({ name: 'refs', requires: [INDEX, optional(EMBEDDINGS), 'workers', 'telepathy?'], provides: { [GREETER.id]: { create: (): Greeter => ({ greet: (n) => n }) } } });
// @ts-expect-error: requires holds refs or names, not numbers
defineFamily({ name: 'bad', requires: [42] });
