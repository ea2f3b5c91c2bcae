// After tsc: copy the JSON tool schemas next to the compiled families (dist/schemas), since
// families locate their schemas relative to their own module file; then write the initialised PGlite data
// directory the package ships (dist/pglite/initdb-<key>.tar.gz), so a user's first start runs no initdb.
// The archive is made by a real initdb here, once per PGlite build (kept while its key matches).
import { cpSync, existsSync } from 'node:fs';
if (existsSync('schemas')) cpSync('schemas', 'dist/schemas', { recursive: true });
const { makeInitdbArchive } = await import('../dist/src/host/db/engines/pglite-template.js');
const t0 = performance.now();
const { file, made } = await makeInitdbArchive();
if (made) console.log(`postbuild: ${file} written in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
