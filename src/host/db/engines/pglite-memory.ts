// The embedded engine's memory settings, as PostgreSQL start parameters. PGlite's WebAssembly memory only
// grows (a page it touched stays resident until the process ends), so what PostgreSQL may allocate at once
// is what the process keeps: these are sized for a personal server, not for PostgreSQL's server defaults.
// Pure: no PGlite import, so the settings schema can take its defaults from here.

export interface PgliteMemory {
  /** shared_buffers, MiB (PGlite's own default: 128). */
  readonly sharedBuffersMb: number;
  /** wal_buffers, KiB; 0: PostgreSQL's automatic 1/32 of shared_buffers. */
  readonly walBuffersKb: number;
  /** work_mem per sort or hash, MiB. */
  readonly workMemMb: number;
  /** maintenance_work_mem (CREATE INDEX, VACUUM, GIN pending-list merges), MiB. */
  readonly maintenanceWorkMemMb: number;
}

/** Measured with bench/footprint (docs/performance.md): 16 MiB of shared buffers saves ~110 MiB resident. */
export const DEFAULT_PGLITE_MEMORY: PgliteMemory = {
  sharedBuffersMb: 16,
  walBuffersKb: 0,
  workMemMb: 4,
  maintenanceWorkMemMb: 16,
};

/** `-c name=value` start parameters for the memory settings (added after PGlite's own defaults). */
export function memoryStartParams(m: PgliteMemory = DEFAULT_PGLITE_MEMORY): string[] {
  const params = [
    `shared_buffers=${m.sharedBuffersMb}MB`,
    `work_mem=${m.workMemMb}MB`,
    `maintenance_work_mem=${m.maintenanceWorkMemMb}MB`,
    ...(m.walBuffersKb > 0 ? [`wal_buffers=${m.walBuffersKb}kB`] : []),
  ];
  return params.flatMap((p) => ['-c', p]);
}
