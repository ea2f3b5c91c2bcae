// The one clamp of a tool's `limit` argument: the caller's number, else the default, never past the cap a
// setting names. Pure; the cap always comes from the family's settings, never from the handler.

/** `requested` (or `fallback` when absent) held between 1 and `cap`; `fallback` defaults to the cap. */
export function clampLimit(requested: number | undefined | null, cap: number, fallback: number = cap): number {
  const want = requested ?? fallback;
  return Math.max(1, Math.min(Number.isFinite(want) ? Math.floor(want) : cap, cap));
}
