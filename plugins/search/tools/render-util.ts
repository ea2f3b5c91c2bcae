// Small pure helpers shared by the search tools' render functions. No I/O.

export function quote(text: string): string {
  return JSON.stringify(text);
}

export function fixed(n: number, digits = 4): string {
  return Number.isFinite(n) ? n.toFixed(digits) : String(n);
}
