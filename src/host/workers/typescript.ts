// How a worker thread loads a TypeScript module when the host runs from its sources (tests, development):
// on Node 20 a worker does not inherit the main thread's module hooks, so it registers a loader first —
// the checkout's own (scripts/ts-loader, which names itself in EXOCORTEX_TS_LOADER) when this process runs
// under it, else tsx's API. A compiled host (dist/) never comes here.

/** The checkout's loader when this process runs under it. */
function checkoutLoader(): string | undefined {
  return process.env.EXOCORTEX_TS_LOADER || undefined;
}

/** Code for an `eval: true` worker that imports the TypeScript module at `entry` (a file URL). */
export function importTypeScriptCode(entry: string): string {
  const loader = checkoutLoader();
  if (loader) return `import(${JSON.stringify(loader)}).then(() => import(${JSON.stringify(entry)}))`;
  return `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((m) => m.tsImport(${JSON.stringify(entry)}, ${JSON.stringify(entry)}))`;
}

let registered: Promise<unknown> | undefined;

/** Import the TypeScript module at `url` from inside a worker thread. */
export async function importTypeScript(url: string): Promise<Record<string, unknown>> {
  const loader = checkoutLoader();
  if (loader) {
    registered ??= import(loader);
    await registered;
    return (await import(url)) as Record<string, unknown>;
  }
  const { tsImport } = await import('tsx/esm/api');
  return (await tsImport(url, import.meta.url)) as Record<string, unknown>;
}
