// What a tool, prompt or resource reader can say to the client while it runs, in either protocol era:
// progress, log messages, and a request for input (elicitation, sampling, roots) answered by the
// client retrying the call. The host fills the channel from the MCP request; tests and CLI callers get
// the silent one.

/** RFC 5424 levels, as MCP's logging uses them. */
export type ClientLogLevel = 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency';

export interface ClientChannel {
  /**
   * How far the work has got. Sent only when the client asked for progress (a progress token); values
   * must grow from call to call. A no-op otherwise, so call it freely from long loops (it is cheap).
   */
  progress(progress: number, total?: number, message?: string): void;
  /** A log message for the client, delivered only at or above the level the client asked for. */
  log(level: ClientLogLevel, data: unknown): void;
  /** What the client said it can answer: form/URL elicitation, sampling, a roots list. */
  readonly can: { readonly elicitation: boolean; readonly sampling: boolean; readonly roots: boolean };
  /** The name the client gave for itself (clientInfo.name), when it gave one; for attribution only. */
  readonly clientName?: string;
  /** Answers to the input an earlier round of this call asked for, by key (untrusted client data). */
  readonly inputResponses?: Readonly<Record<string, unknown>>;
  /** The state an earlier round returned, as it returned it: the host seals it and refuses a forged, expired or foreign one before the handler runs. */
  readonly requestState?: string;
}

export const silentChannel: ClientChannel = {
  progress() {},
  log() {},
  can: { elicitation: false, sampling: false, roots: false },
};

/** One embedded request of an input-needed result, in MCP's wire shape (`method` + `params`). */
export type InputRequest =
  | { readonly method: 'elicitation/create'; readonly params: Record<string, unknown> }
  | { readonly method: 'sampling/createMessage'; readonly params: Record<string, unknown> }
  | { readonly method: 'roots/list'; readonly params?: Record<string, unknown> };

const INPUT_NEEDED = Symbol.for('exocortex.inputNeeded');

export interface InputNeeded {
  readonly [INPUT_NEEDED]: true;
  readonly inputRequests?: Readonly<Record<string, InputRequest>>;
  readonly requestState?: string;
}

/**
 * Return this from a handler (instead of its output) to ask the client for input: the client answers
 * each request and calls again with `inputResponses` (and `requestState` echoed). On a 2025-era
 * connection the host asks the client itself and re-enters the handler, so one handler serves both.
 */
export function inputNeeded(spec: {
  inputRequests?: Record<string, InputRequest>;
  requestState?: string;
}): InputNeeded {
  if (!spec.inputRequests && spec.requestState === undefined)
    throw new TypeError('inputNeeded: give inputRequests, requestState or both');
  return { [INPUT_NEEDED]: true, ...spec };
}

export function isInputNeeded(value: unknown): value is InputNeeded {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[INPUT_NEEDED] === true;
}
