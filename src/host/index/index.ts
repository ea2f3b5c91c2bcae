// The index pipeline's public surface: the host constructs an IndexPipeline per served vault.
export { IndexPipeline } from './pipeline.js';
export type { IndexCounters } from './state.js';
export type { IndexSettings, PipelineDeps, PipelineStatus, ContributorEntry } from './types.js';
