// The MCP SDK's server side, as the host loads it. Every host module imports the SDK from here or from
// ./sdk-node.ts, never from the packages (test/unit/architecture holds it), so that `npm run build` can
// bundle these two modules with the SDK and zod (scripts/postbuild.mjs, shared chunks): on Node 20 the
// SDK's ~110 modules load in about twice the bundle's time (bench/startup's startup_sdk_import_*), most of a
// stdio start's wait for `initialize` (the SDK's ajv loads on its first schema there: ./sdk-shims.ts).
// One place to import from keeps one instance of each SDK class in a built process.
export * from '@modelcontextprotocol/server';
export { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
