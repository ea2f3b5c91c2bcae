// The refs of every service the host offers families, and of the services built-in families offer
// each other (whose interfaces live in src/sdk so provider and consumers share one declaration).
import { serviceRef } from './service-ref.js';
import type { IndexService } from './index-service.js';
import type { Database, ListEvents, ResourceEvents, WorkerPool } from './types.js';
import type { NoteWriter, WriteObservers } from './write-hooks.js';
import type { EmbeddingsService } from './contracts/embeddings.js';
import type { LinksService } from './contracts/links.js';

/** The host's index of every vault: status, settled(), write-through (noteWritten/noteRemoved/noteMoved). */
export const INDEX = serviceRef<IndexService>('index');
/** The host's resource-subscription hub: tell subscribed clients a resource changed. */
export const RESOURCE_EVENTS = serviceRef<ResourceEvents>('resource-events');
/** The host's list-changed announcer. */
export const LIST_EVENTS = serviceRef<ListEvents>('list-events');
/** The host's write observers: every serving family's before/after hooks, in family order. */
export const WRITE_OBSERVERS = serviceRef<WriteObservers>('write-observers');
/** The one note-write path (provided by the notes family). */
export const NOTE_WRITER = serviceRef<NoteWriter>('note-writer');
/** Embeddings and nearest-note queries (provided by the search family; graph's find_related uses it). */
export const EMBEDDINGS = serviceRef<EmbeddingsService>('embeddings');
/** The vault's stored links, in bulk (provided by the graph family; bases' link predicates use it). */
export const LINKS = serviceRef<LinksService>('links');
/** The host's worker pool (also ctx.workers). */
export const WORKERS = serviceRef<WorkerPool>('workers');
/** The host's database (also ctx.db). */
export const DATABASE = serviceRef<Database>('db');
