// What an index contributor derives from a parsed note model, kept per model object so the work done by its
// `prepare` (ahead of the index transaction) is found again by `write`/`writeMany`. Holds no model alive.

/**
 * A memo of `derive(model, params)` per model object. A value derived under other params (the operator
 * changed a limit in between) is derived again, never served stale.
 */
export class ModelMemo<Model extends object, Params, Value> {
  private readonly values = new WeakMap<Model, { readonly key: string; readonly value: Value }>();

  constructor(
    private readonly derive: (model: Model, params: Params) => Value,
    private readonly keyOf: (params: Params) => string = (p) => JSON.stringify(p),
  ) {}

  /** Derive now and keep it for the same model and params. */
  warm(model: Model, params: Params): void {
    this.get(model, params);
  }

  /** The value for this model and params: the kept one when it was derived under the same params. */
  get(model: Model, params: Params): Value {
    const key = this.keyOf(params);
    const kept = this.values.get(model);
    if (kept && kept.key === key) return kept.value;
    const value = this.derive(model, params);
    this.values.set(model, { key, value });
    return value;
  }
}
