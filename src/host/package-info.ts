// Where this package is installed and what version it is: read once from its own package.json, the one
// place the version is written. Never reads the working directory (a global install runs from anywhere).

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface PackageJson {
  readonly name: string;
  readonly version: string;
}

/** Walk up from this module (src/host/ under tsx, dist/src/host/ after tsc) to exocortex's package.json. */
function findPackage(from: string): { root: string; pkg: PackageJson } {
  let dir = path.dirname(from);
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as PackageJson;
      if (pkg.name === 'exocortex') return { root: dir, pkg };
    }
    const up = path.dirname(dir);
    // A bundle copied elsewhere (a test's child process): no package around it; nothing here is read
    // then but the version, and the native core comes from $EXOCORTEX_NATIVE_ADDON.
    if (up === dir)
      return { root: path.dirname(from), pkg: { name: 'exocortex', version: '0.0.0-unpackaged' } as PackageJson };
    dir = up;
  }
}

const found = findPackage(fileURLToPath(import.meta.url));

/** The package's root folder: a git checkout, or node_modules/exocortex of an install. */
export const PACKAGE_ROOT: string = found.root;
/** package.json's version: served to MCP clients, /health, the admin channel and `--version`. */
export const PACKAGE_VERSION: string = found.pkg.version;
