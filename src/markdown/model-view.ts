// A caller's slice of a NoteModel: only the fields it names, plus the length of every list, so a note's
// model crosses from a worker thread in proportion to what the caller reads, not to the note's size (a
// 2.4 MB note of 50,000 tasks is a few hundred bytes for an outline). Pure; never parses.
import type { NoteModel, NoteTag } from './types.js';

/** The NoteModel fields a caller may ask for (`path` always comes). */
export type NoteModelField = Exclude<keyof NoteModel, 'path'>;

/** How many entries each of the model's lists holds, known without the lists. */
export interface ModelCounts {
  tags: number;
  outline: number;
  links: number;
  blockIds: number;
  tasks: number;
  chunks: number;
}

export interface ModelViewSpec<F extends NoteModelField = NoteModelField> {
  readonly fields: readonly F[];
  /**
   * Keep only the first tag of each (identity, source) pair: what a tag list, a has-tag check or a
   * frontmatter-vs-inline check reads, without one entry per occurrence (later lines are dropped).
   */
  readonly distinctTags?: boolean;
  /**
   * With `links` in fields: only the links this names (embeds only, a target ending with a suffix, at most
   * `max`), so a caller looking for a few kinds of link does not receive a huge note's every link.
   */
  readonly linkFilter?: LinkFilter;
}

/** Which links a model view keeps (see ModelViewSpec.linkFilter). */
export interface LinkFilter {
  readonly embedsOnly?: boolean;
  /** Case-insensitive suffix of the link's target, e.g. `.base`. */
  readonly targetSuffix?: string;
  readonly max?: number;
}

/** The links a filter keeps, in document order. */
export function filterLinks<L extends { embed: boolean; target: string }>(links: readonly L[], f: LinkFilter): L[] {
  const suffix = f.targetSuffix?.toLowerCase();
  const out: L[] = [];
  for (const l of links) {
    if (f.max !== undefined && out.length >= f.max) break;
    if (f.embedsOnly && !l.embed) continue;
    if (suffix !== undefined && !l.target.toLowerCase().endsWith(suffix)) continue;
    out.push(l);
  }
  return out;
}

export type ModelView<F extends NoteModelField = NoteModelField> = Pick<NoteModel, F | 'path'> & {
  counts: ModelCounts;
};

export function countsOf(
  model: Pick<NoteModel, 'tags' | 'outline' | 'links' | 'blockIds' | 'tasks' | 'chunks'>,
): ModelCounts {
  return {
    tags: model.tags.length,
    outline: model.outline.length,
    links: model.links.length,
    blockIds: model.blockIds.length,
    tasks: model.tasks.length,
    chunks: model.chunks.length,
  };
}

/** The first tag of each (identity, source) pair, in document order. */
export function distinctTags(tags: readonly NoteTag[]): NoteTag[] {
  const seen = new Set<string>();
  const out: NoteTag[] = [];
  for (const t of tags) {
    const key = `${t.source}\u0000${t.tag}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(t);
  }
  return out;
}

export function viewOfModel<F extends NoteModelField>(model: NoteModel, spec: ModelViewSpec<F>): ModelView<F> {
  const view: Record<string, unknown> = { path: model.path, counts: countsOf(model) };
  for (const f of spec.fields)
    view[f] =
      f === 'tags' && spec.distinctTags
        ? distinctTags(model.tags)
        : f === 'links' && spec.linkFilter
          ? filterLinks(model.links, spec.linkFilter)
          : model[f];
  return view as ModelView<F>;
}

/** The model's lists that grow with a note's size (one entry per tag, link, task, chunk…). */
const LISTS = ['tags', 'outline', 'links', 'blockIds', 'tasks', 'chunks'] as const;

/**
 * A NoteModel whose long lists travel as JSON text, `size` entries per string: a structured clone of
 * strings is a copy of bytes, where one of 50,000 task objects is a single pause as long as the receiving
 * thread needs to build them (and then to collect them). unpackModel rebuilds it a slice at a time.
 */
export interface PackedModel {
  model: NoteModel;
  packed: Partial<Record<(typeof LISTS)[number], string[]>>;
}

export function packModel(model: NoteModel, size: number): PackedModel {
  const packed: PackedModel['packed'] = {};
  const out: Record<string, unknown> = { ...model };
  for (const list of LISTS) {
    const items: readonly unknown[] = model[list];
    if (items.length <= size) continue;
    const slices: string[] = [];
    for (let i = 0; i < items.length; i += size) slices.push(JSON.stringify(items.slice(i, i + size)));
    packed[list] = slices;
    out[list] = [];
  }
  return { model: out as unknown as NoteModel, packed };
}

/** The model packModel packed, rebuilt one slice per `pause()` (which lets the event loop turn). */
export async function unpackModel(p: PackedModel, pause: () => Promise<unknown>): Promise<NoteModel> {
  for (const list of LISTS) {
    const slices = p.packed[list];
    if (!slices) continue;
    const items: unknown[] = [];
    for (const s of slices) {
      for (const item of JSON.parse(s) as unknown[]) items.push(item);
      await pause();
    }
    (p.model as unknown as Record<string, unknown[]>)[list] = items;
  }
  return p.model;
}
