// Receives one upload body into a private temp file outside the vault, enforcing the byte cap while the
// bytes stream and a wall-clock deadline. Never touches the vault; never keeps more than one chunk in memory.
import type { IncomingMessage } from 'node:http';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

export class UploadStop extends Error {
  constructor(readonly kind: 'too_large' | 'timeout' | 'aborted') {
    super(kind);
    this.name = 'UploadStop';
  }
}

export interface Received {
  readonly file: string;
  readonly size: number;
  cleanup(): Promise<void>;
}

export async function receiveBody(src: IncomingMessage, maxBytes: number, timeoutMs: number): Promise<Received> {
  const dir = await mkdtemp(path.join(tmpdir(), 'exo-upload-'));
  const file = path.join(dir, 'body');
  const cleanup = () => rm(dir, { recursive: true, force: true });
  const fh = await open(file, 'wx', 0o600);
  try {
    const size = await new Promise<number>((resolve, reject) => {
      let size = 0;
      let done = false;
      let pending: Promise<unknown> = Promise.resolve();
      const finish = (err: Error | undefined) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        src.off('data', onData).off('end', onEnd).off('close', onClose).off('error', onError);
        if (err) {
          src.pause();
          reject(err);
        } else resolve(size);
      };
      const timer = setTimeout(() => finish(new UploadStop('timeout')), Math.max(0, timeoutMs));
      const onData = (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) return finish(new UploadStop('too_large'));
        src.pause();
        pending = fh.write(chunk).then(
          () => {
            if (!done) src.resume();
          },
          (e: Error) => finish(e),
        );
      };
      const onEnd = () => void pending.then(() => finish(undefined));
      const onClose = () => {
        if (!src.complete) finish(new UploadStop('aborted'));
      };
      const onError = () => finish(new UploadStop('aborted'));
      src.on('data', onData).on('end', onEnd).on('close', onClose).on('error', onError);
    });
    await fh.sync();
    return { file, size, cleanup };
  } catch (e) {
    await cleanup();
    throw e;
  } finally {
    await fh.close().catch(() => undefined);
  }
}
