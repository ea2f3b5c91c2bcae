// Gives the memory threads freed back to the system. glibc keeps what a thread frees in its malloc arena and
// returns it only from the top of each heap, so what V8's compilers, PGlite's start-up and an index pass
// allocated and freed stays resident: about 70 MiB on an idle server (bench/footprint). malloc_trim(0)
// releases every free page; the native core runs it on the thread pool, a few milliseconds, so the host
// asks for it shortly after start and then on a timer. A no-op where the addon lacks it (musl, old builds).
import type { Logger } from '../sdk/types.js';
import { loadNative } from './vault/native.js';

/** The first trim, once start-up's garbage is freed. */
const FIRST_TRIM_MS = 1_000;
/** Then this often: cheap when there is nothing to give back, and a burst of work is given back soon. */
export const TRIM_INTERVAL_MS = 10_000;

export class MemoryTrim {
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(
    private readonly log: Logger,
    private readonly trim: (() => Promise<boolean>) | undefined = loadNative()?.trimMemory,
  ) {}

  start(): void {
    if (!this.trim || this.timer) return;
    this.timer = setTimeout(() => this.tick(), FIRST_TRIM_MS);
    this.timer.unref();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private tick(): void {
    if (!this.timer) return;
    this.timer = setTimeout(() => this.tick(), TRIM_INTERVAL_MS);
    this.timer.unref();
    if (this.running) return;
    this.running = true;
    this.trim!()
      .catch((e: unknown) => this.log.debug({ err: String(e) }, 'malloc_trim failed'))
      .finally(() => {
        this.running = false;
      });
  }
}
