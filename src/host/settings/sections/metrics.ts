// Host settings, section `metrics`: The Prometheus metrics endpoint.
import { z } from 'zod';
import { section } from './section.js';

export const metricsSection = section(
  'restart',
  z
    .object({
      enabled: z
        .boolean()
        .default(false)
        .describe('Serve Prometheus metrics at GET /metrics (off: /metrics answers 404).'),
      token: z
        .string()
        .default('')
        .refine((v) => v === '' || v.length >= 16, 'a metrics token is at least 16 characters')
        .describe(
          'Bearer secret a scraper sends (`Authorization: Bearer …`; set it through EXO_METRICS_TOKEN rather than the file). Empty: only loopback scrapes, if metrics.allowLoopback.',
        ),
      allowLoopback: z
        .boolean()
        .default(false)
        .describe(
          'Let a scraper on this machine (a loopback peer that forwards for no one) read /metrics without the token.',
        ),
    })
    .strict()
    .prefault({})
    .refine(
      (m) => !m.enabled || m.token !== '' || m.allowLoopback,
      'metrics.enabled needs metrics.token (for remote scrapers) or metrics.allowLoopback (for a scraper on this machine)',
    )
    .describe(
      'Prometheus metrics (prom-client): MCP operation durations, tool results, admission refusals, sessions, index, workers, audit, process.',
    ),
);
