// `node --import ./scripts/ts-loader/register.mjs file.ts`: runs this checkout's TypeScript without tsx
// (the tests' loader, tap's node-arg). Prebuilding (build.mjs, part of `npm test`) makes each test
// process read compiled files instead of transforming them; see hooks.mjs.
import { register } from 'node:module';

register(new URL('./hooks.mjs', import.meta.url));
