// Prometheus metrics for /metrics (prom-client): MCP operation durations by method and tool (named after
// OpenTelemetry's MCP semantic conventions: mcp.server.operation.duration, mcp.method.name,
// gen_ai.tool.name, error.type), tool results by outcome and refusal code, admission refusals by reason,
// and gauges read when scraped (sessions, subscriptions, listen streams, index pending per vault, worker
// queue, audit queue and drops, database pool connections, waiters and wait times, families' health
// counts per vault, read once per scrape, and each backlog a family declares, e.g. exocortex_embedding_backlog), plus prom-client's default process metrics. Holds no vault content:
// labels are tool names, method names, refusal codes and vault names only.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { backlogOf, type HealthBacklog } from '../../sdk/define-family.js';

/** What the gauges read at scrape time; each is cheap and in memory. */
export interface MetricsSources {
  sessions(): number;
  subscriptions(): number;
  listenStreams(): number;
  vaults(): Record<string, { state: string; notes?: number; pending?: number; failures?: number }>;
  workers(): { threads: number; queued: number; completed: number };
  audit(): { pending: number; written: number; dropped: number };
  /** The database pool's connections and the queries waiting for one. */
  pool(): { total: number; idle: number; waiting: number };
  /** Each serving family's `health` counts per served vault (vault name → family → fields): read once per scrape. */
  familyHealth(): Promise<Record<string, Record<string, unknown>>>;
  /** The backlogs serving families declare (`healthBacklog`: which health fields to sum). */
  backlogs(): ReadonlyArray<HealthBacklog & { family: string }>;
  /** Vault leases (several processes on one PostgreSQL server): owned now, and the lease events so far. */
  leases?(): {
    owned: number;
    acquired: number;
    lost: number;
    handedBack: number;
    connectionLosses: number;
    liveBidders: number;
  };
}

type Health = Record<string, Record<string, unknown>>;

const ADMISSION_CODES = new Set(['rate_limited', 'busy', 'quota_exceeded']);
/** Seconds; MCP calls run from sub-millisecond reads to the 30 s deadline. */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export class HostMetrics {
  readonly registry = new Registry();
  private readonly operation: Histogram<'mcp_method_name' | 'gen_ai_tool_name' | 'error_type'>;
  private readonly results: Counter<'gen_ai_tool_name' | 'outcome' | 'code'>;
  private readonly admission: Counter<'reason'>;
  private readonly poolWaits: Histogram;
  private readonly forwards: Histogram<'outcome'>;
  /** The families' health of the scrape under way (render reads it once; the gauges' collect use it). */
  private health: Health = {};
  private readonly backlogGauges = new Map<string, Gauge<'vault'>>();

  constructor(private readonly sources: MetricsSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.operation = new Histogram({
      name: 'mcp_server_operation_duration_seconds',
      help: 'Duration of MCP requests the server answered (OpenTelemetry mcp.server.operation.duration), by method and, for tools/call, tool.',
      labelNames: ['mcp_method_name', 'gen_ai_tool_name', 'error_type'],
      buckets: BUCKETS,
      registers,
    });
    this.results = new Counter({
      name: 'exocortex_tool_results_total',
      help: 'Tool call results by outcome (ok, refused, error) and refusal code.',
      labelNames: ['gen_ai_tool_name', 'outcome', 'code'],
      registers,
    });
    this.admission = new Counter({
      name: 'exocortex_admission_refusals_total',
      help: 'Calls refused before any work by admission (rate_limited, busy, quota_exceeded).',
      labelNames: ['reason'],
      registers,
    });
    const gauge = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read());
        },
      });
    gauge('exocortex_mcp_sessions', 'Open stateful MCP sessions (2025-era clients and stdio).', () =>
      sources.sessions(),
    );
    gauge('exocortex_resource_subscriptions', 'Resource subscriptions held by 2025-era sessions.', () =>
      sources.subscriptions(),
    );
    gauge('exocortex_listen_streams', 'Open subscriptions/listen streams (2026-07-28 clients).', () =>
      sources.listenStreams(),
    );
    gauge(
      'exocortex_worker_queue_depth',
      'Tasks waiting for a worker thread (parsing, chunking, diffing, token counts).',
      () => sources.workers().queued,
    );
    gauge('exocortex_worker_threads', 'Worker threads running.', () => sources.workers().threads);
    gauge('exocortex_audit_queue', 'Usage rows waiting to be written.', () => sources.audit().pending);
    new Counter({
      name: 'exocortex_audit_dropped_total',
      help: 'Usage rows dropped (the batch writer was full, or a flush failed).',
      registers,
      collect() {
        this.reset();
        this.inc(sources.audit().dropped);
      },
    });
    gauge('exocortex_db_pool_waiting', 'Queries waiting for a database connection.', () => sources.pool().waiting);
    new Gauge({
      name: 'exocortex_db_pool_connections',
      help: 'Database connections by state (idle, busy); embedded PGlite has exactly one.',
      labelNames: ['state'],
      registers,
      collect() {
        const c = sources.pool();
        this.set({ state: 'idle' }, c.idle);
        this.set({ state: 'busy' }, c.total - c.idle);
      },
    });
    this.poolWaits = new Histogram({
      name: 'exocortex_db_pool_wait_seconds',
      help: 'Time a query or transaction waited for a database connection.',
      buckets: [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
      registers,
    });
    this.forwards = new Histogram({
      name: 'exocortex_forward_seconds',
      help: "Requests (MCP calls, transfer links, panel pages) forwarded to their vault's owner process, by outcome (ok, failed, no_owner), to the end of the answer.",
      labelNames: ['outcome'],
      buckets: BUCKETS,
      registers,
    });
    if (sources.leases) {
      const leases = sources.leases;
      gauge(
        'exocortex_vault_leases_owned',
        'Vaults this process owns (serves, indexes, writes) now.',
        () => leases().owned,
      );
      gauge(
        'exocortex_cluster_live_bidders',
        'Processes bidding for vault leases seen alive at the last lease round (this one included); a fair share is ⌈vaults ÷ this⌉.',
        () => leases().liveBidders,
      );
      new Gauge({
        name: 'exocortex_vault_lease_events',
        help: 'Vault lease events since start: acquired, lost (handed back or taken), handed_back (to even the shares), connection_losses (fail-stops).',
        labelNames: ['event'],
        registers,
        collect() {
          const c = leases();
          this.set({ event: 'acquired' }, c.acquired);
          this.set({ event: 'lost' }, c.lost);
          this.set({ event: 'handed_back' }, c.handedBack);
          this.set({ event: 'connection_losses' }, c.connectionLosses);
        },
      });
    }
    const metrics = this;
    new Gauge({
      name: 'exocortex_family_health',
      help: 'Each numeric or boolean field of a serving family\'s health, per vault (e.g. family="search": queued and stale are the embedding backlog; family="history": store_bytes).',
      labelNames: ['family', 'field', 'vault'],
      registers,
      collect() {
        this.reset();
        for (const [vault, families] of Object.entries(metrics.health))
          for (const [family, fields] of Object.entries(families)) {
            if (typeof fields !== 'object' || fields === null) continue;
            for (const [field, value] of Object.entries(fields)) {
              if (typeof value === 'number' && Number.isFinite(value)) this.set({ family, field, vault }, value);
              else if (typeof value === 'boolean') this.set({ family, field, vault }, value ? 1 : 0);
            }
          }
      },
    });
    const perVault = (
      name: string,
      help: string,
      pick: (v: { state: string; notes?: number; pending?: number; failures?: number }) => number,
    ) =>
      new Gauge({
        name,
        help,
        labelNames: ['vault'],
        registers,
        collect() {
          this.reset();
          for (const [vault, v] of Object.entries(sources.vaults())) this.set({ vault }, pick(v));
        },
      });
    perVault('exocortex_index_notes', 'Notes indexed, per vault.', (v) => v.notes ?? 0);
    perVault(
      'exocortex_index_pending',
      'Changed notes waiting for the index, per vault (the index lag in notes).',
      (v) => v.pending ?? 0,
    );
    perVault('exocortex_index_failures', 'Notes the index could not read or parse, per vault.', (v) => v.failures ?? 0);
    perVault('exocortex_vault_serving', '1 while the vault is served, 0 while it is unavailable.', (v) =>
      v.state === 'serving' ? 1 : 0,
    );
  }

  /** One tools/call answered: its duration and outcome (refusalCode when refused). */
  toolCall(tool: string, seconds: number, outcome: 'ok' | 'refused' | 'error', refusalCode: string | null): void {
    const errorType = outcome === 'ok' ? '' : (refusalCode ?? outcome);
    this.operation.observe({ mcp_method_name: 'tools/call', gen_ai_tool_name: tool, error_type: errorType }, seconds);
    this.results.inc({ gen_ai_tool_name: tool, outcome, code: refusalCode ?? '' });
    if (refusalCode && ADMISSION_CODES.has(refusalCode)) this.admission.inc({ reason: refusalCode });
  }

  /** A forwarded request ended (its answer fully relayed, or the hop failed). */
  forwarded(seconds: number, outcome: 'ok' | 'failed' | 'no_owner'): void {
    this.forwards.observe({ outcome }, seconds);
  }

  /** A query waited this long for a database connection. */
  poolWait(seconds: number): void {
    this.poolWaits.observe(seconds);
  }

  /** Any other MCP request answered over HTTP (tools/list, resources/read, initialize…). */
  request(method: string, seconds: number, status: number): void {
    this.operation.observe(
      { mcp_method_name: method, gen_ai_tool_name: '', error_type: status >= 400 ? String(status) : '' },
      seconds,
    );
  }

  /** A gauge per declared backlog (`exocortex_<name>_backlog{vault}`), made when a family first declares it. */
  private ensureBacklogs(): void {
    for (const b of this.sources.backlogs()) {
      if (this.backlogGauges.has(b.name)) continue;
      const metrics = this;
      const metricName = `exocortex_${b.name}_backlog`;
      if (this.registry.getSingleMetric(metricName)) continue;
      this.backlogGauges.set(
        b.name,
        new Gauge({
          name: metricName,
          help: b.help,
          labelNames: ['vault'],
          registers: [this.registry],
          collect() {
            this.reset();
            // The declaring family of now (a reload may have changed it); no sample where a field is missing.
            const now = metrics.sources.backlogs().find((x) => x.name === b.name);
            if (!now) return;
            for (const [vault, families] of Object.entries(metrics.health)) {
              const n = backlogOf(families[now.family], now);
              if (n !== undefined) this.set({ vault }, n);
            }
          },
        }),
      );
    }
  }

  async render(): Promise<{ contentType: string; body: string }> {
    // One read of every family's health per scrape, whatever number of gauges show it.
    this.health = await this.sources.familyHealth().catch(() => ({}));
    this.ensureBacklogs();
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

export { mayScrape } from './scrape-access.js';
