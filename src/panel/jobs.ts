// Background jobs the panel starts (re-index, rebuild keyword index, re-embed): the job lives in this
// process while the page polls its progress (a re-index of a vault another process owns runs there,
// streaming its progress back). Kept in memory (a restart forgets them; the work
// itself is resumable: the index catches up at start). Only the newest few are kept.
import { randomBytes } from 'node:crypto';

export interface Job {
  readonly id: string;
  readonly title: string;
  readonly user: string;
  readonly startedAt: Date;
  state: 'running' | 'done' | 'failed';
  done: number;
  total: number;
  message: string;
  finishedAt?: Date;
}

const KEEP = 20;

export class PanelJobs {
  private readonly jobs = new Map<string, Job>();

  start(title: string, user: string, run: (progress: (done: number, total: number) => void) => Promise<string>): Job {
    const job: Job = {
      id: randomBytes(9).toString('base64url'),
      title,
      user,
      startedAt: new Date(),
      state: 'running',
      done: 0,
      total: 0,
      message: 'starting…',
    };
    this.jobs.set(job.id, job);
    for (const id of [...this.jobs.keys()].slice(0, Math.max(0, this.jobs.size - KEEP))) this.jobs.delete(id);
    void run((done, total) => {
      job.done = done;
      job.total = total;
      job.message = `${done} of ${total}`;
    }).then(
      (message) => Object.assign(job, { state: 'done', message, finishedAt: new Date() }),
      (e: unknown) =>
        Object.assign(job, {
          state: 'failed',
          message: e instanceof Error ? e.message : String(e),
          finishedAt: new Date(),
        }),
    );
    return job;
  }

  get(id: string): Job | undefined {
    return this.jobs.get(id);
  }

  list(): Job[] {
    return [...this.jobs.values()].reverse();
  }
}
