// After tsc: copy the JSON tool schemas next to the compiled families (dist/schemas), since
// families locate their schemas relative to their own module file.
import { cpSync, existsSync } from 'node:fs';
if (existsSync('schemas')) cpSync('schemas', 'dist/schemas', { recursive: true });
