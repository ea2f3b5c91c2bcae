// The SDK's Node HTTP transport, bundled at build with ./sdk.ts (which see); apart from it so that a stdio
// process never loads the HTTP server's code.
export { NodeStreamableHTTPServerTransport, toNodeHandler } from '@modelcontextprotocol/node';
