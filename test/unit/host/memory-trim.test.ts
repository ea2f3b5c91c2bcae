// The host's memory trim: the first trim soon after start, then on a timer, one at a time, none after stop.
import t from 'tap';
import { MemoryTrim } from '../../../src/host/memory-trim.js';
import type { Logger } from '../../../src/sdk/types.js';

const log = { debug: () => undefined } as unknown as Logger;

t.test('trims once start-up is over, never two at once, and not after stop', async (t) => {
  let calls = 0;
  let release: (v: boolean) => void = () => undefined;
  const trim = new MemoryTrim(log, () => {
    calls++;
    return new Promise<boolean>((r) => (release = r));
  });
  trim.start();
  trim.start(); // a second start changes nothing
  t.equal(calls, 0, 'nothing at once');
  await new Promise((r) => setTimeout(r, 1300));
  t.equal(calls, 1, 'the first trim about a second after start');
  trim.stop();
  release(true);
  await new Promise((r) => setTimeout(r, 50));
  t.equal(calls, 1, 'none after stop');
});

t.test('without the native call it does nothing', async (t) => {
  const trim = new MemoryTrim(log, undefined);
  trim.start();
  trim.stop();
  t.pass('no timer, no error');
});
