// Builds the prebuilt native cores the package ships (prepack runs it; so can `npm run prebuild`):
// prebuilds/linux-x64/exocortex.glibc.node and prebuilds/linux-arm64/exocortex.glibc.node, Node-API, with
// prebuildify. Each build runs in a scratch copy of binding.gyp and native/, so it never overwrites the
// checkout's own build/Release (which tests in flight may be loading). The other arch is cross-compiled with
// Debian's g++-<triple> (g++-aarch64-linux-gnu on x64); a missing cross compiler fails the pack, naming the
// package, unless EXOCORTEX_PREBUILD_ARCHES names only the arches this machine can build.
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), '..');
/** Debian triple and ELF e_machine of each arch the package ships. */
const TARGETS = {
  x64: { triple: 'x86_64-linux-gnu', machine: 62 },
  arm64: { triple: 'aarch64-linux-gnu', machine: 183 },
};
const arches = (process.env.EXOCORTEX_PREBUILD_ARCHES ?? 'x64,arm64').split(',').filter(Boolean);
const prebuildify = createRequire(path.join(ROOT, 'package.json')).resolve('prebuildify/bin.js');

function onPath(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

/** The ELF header's machine field: the check that a cross build produced the arch it claims. */
function elfMachine(file) {
  const b = readFileSync(file);
  if (b.readUInt32BE(0) !== 0x7f454c46) throw new Error(`${file} is not an ELF file`);
  return b.readUInt16LE(18);
}

// Node-API binaries build against any Node's headers: use the running Node's version, and its installed
// headers when it has them (Debian's nodejs does, under /usr), so that no header download is needed.
const nodeDir = path.resolve(path.dirname(process.execPath), '..');
const localHeaders = existsSync(path.join(nodeDir, 'include', 'node', 'node_api.h'));

for (const arch of arches) {
  const target = TARGETS[arch];
  if (!target) throw new Error(`EXOCORTEX_PREBUILD_ARCHES: no target ${arch} (known: ${Object.keys(TARGETS)})`);
  const env = { ...process.env };
  if (!env.npm_config_nodedir && localHeaders) env.npm_config_nodedir = nodeDir;
  if (arch !== os.arch()) {
    const cxx = `${target.triple}-g++`;
    if (!onPath(cxx)) {
      console.error(
        `prebuild: ${cxx} is not installed, so the linux-${arch} binary cannot be built: apt-get install g++-${target.triple}` +
          ` (or set EXOCORTEX_PREBUILD_ARCHES=${os.arch()} for a package that runs on this arch only)`,
      );
      process.exit(1);
    }
    Object.assign(env, {
      CC: `${target.triple}-gcc`,
      CXX: cxx,
      LINK: cxx,
      AR: `${target.triple}-ar`,
      PREBUILD_STRIP_BIN: `${target.triple}-strip`,
    });
  }
  const scratch = mkdtempSync(path.join(os.tmpdir(), `exocortex-prebuild-${arch}-`));
  try {
    copyFileSync(path.join(ROOT, 'binding.gyp'), path.join(scratch, 'binding.gyp'));
    cpSync(path.join(ROOT, 'native'), path.join(scratch, 'native'), { recursive: true });
    writeFileSync(path.join(scratch, 'package.json'), JSON.stringify({ name: 'exocortex', private: true }));
    // binding.gyp finds node-addon-api's headers with require() from the build folder.
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(scratch, 'node_modules'));
    const r = spawnSync(
      process.execPath,
      [
        prebuildify,
        '--napi',
        '--strip',
        '--tag-libc',
        `--target=${process.versions.node}`,
        `--arch=${arch}`,
        '--platform=linux',
        scratch,
      ],
      { cwd: scratch, env, stdio: 'inherit' },
    );
    if (r.status !== 0) process.exit(r.status ?? 1);
    const built = path.join(scratch, 'prebuilds', `linux-${arch}`, 'exocortex.glibc.node');
    const machine = elfMachine(built);
    if (machine !== target.machine) throw new Error(`${built}: ELF machine ${machine}, expected ${target.machine}`);
    const dest = path.join(ROOT, 'prebuilds', `linux-${arch}`);
    rmSync(dest, { recursive: true, force: true });
    mkdirSync(dest, { recursive: true });
    copyFileSync(built, path.join(dest, 'exocortex.glibc.node'));
    console.error(`prebuild: prebuilds/linux-${arch}/exocortex.glibc.node (ELF machine ${machine})`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
