// Shared query helpers every family uses for its tools' common arguments (folder, limit, cursor, tags)
// and SQL list parameters. Pure; written once here so the families cannot drift apart.
export * from './folder-scope.js';
export * from './limit.js';
export * from './cursor.js';
export * from './sql-params.js';
export * from './tag-key.js';
export * from './actors.js';
export * from './page.js';
