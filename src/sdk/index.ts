// The public plugin API: what a family (built-in or third-party) imports. Nothing here imports the host.
export * from './define-family.js';
export * from './define-tool.js';
export * from './refusals.js';
export type * from './types.js';
export type * from './vault.js';
export * from './testkit.js';
export * from './obsidian-link.js';
export * from './printable.js';
export type * from './index-service.js';
export { indexLag } from './index-service.js';
export { mapLimit } from './map-limit.js';
export * from './client-channel.js';
export * from './link-moves.js';
export type { ResultPaging, BudgetCut } from './result-budget.js';
export * from './ssrf/ip-policy.js';
export * from './ssrf/url-policy.js';
export * from './ssrf/guarded-fetch.js';
