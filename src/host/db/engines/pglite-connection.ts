// node-postgres' connection to embedded PGlite (on its own thread or this one): frontend messages are
// serialised by pg-protocol, the serialiser node-postgres uses against a server, and handed to PGlite's
// protocol entry point one after another; the answers are emitted as node-postgres expects them.
// Replaces PGlite's own bridge (@electric-sql/pglite/node-postgres, 0.5.14), whose serialiser measures every
// string's UTF-8 length in a JavaScript loop and copies each parameter twice more: binding the index's batch
// parameters (a batch's notes as one jsonb text) took ~1.3 of the main thread's ~10 CPU-s in a first index of
// oldwinter ×2, ~0.3 with pg-protocol.
// Never parses SQL or answers anything itself; the only statements of its own are a session reset (SESSION_RESET).
import { EventEmitter } from 'node:events';
import pg from 'pg';
import { serialize } from 'pg-protocol';
import type { BackendMessage } from 'pg-protocol/dist/messages';

/** The part of PGlite's interface this connection calls (PGlite itself, or ThreadedPglite). */
export interface ProtocolTarget {
  readonly waitReady: Promise<void>;
  execProtocolStream(message: Uint8Array, options?: { throwOnError?: boolean }): Promise<BackendMessage[]>;
}

type Serializer = typeof serialize;

/** Connections opened on each engine so far (every one after the first begins by resetting the session). */
const opened = new WeakMap<ProtocolTarget, number>();

/**
 * What a connection after the first sends before it serves: the engine has one PostgreSQL session, which every
 * connection uses in turn. node-postgres' pool drops a client whose `pool.query` failed, or that reported an
 * error, and makes another; the new one must not inherit an open (or failed) transaction, prepared statements
 * its pg.Client never parsed (re-parsing one would fail as a duplicate), or session settings.
 */
const SESSION_RESET = ['ROLLBACK', 'DISCARD ALL'];

/** The connection object a pg.Client drives (the subset of node-postgres' Connection it calls). */
export class PgliteConnection extends EventEmitter {
  _connecting = false;
  readonly stream = { destroy: () => this.end() };
  // node-postgres keeps which statements it has prepared on the connection.
  parsedStatements: Record<string, string> = {};
  submittedNamedStatements: Record<string, string> = {};
  /** Messages go to PGlite in call order, each after the one before has answered. */
  private chain: Promise<unknown>;
  private forwardMessages = false;

  constructor(private readonly target: ProtocolTarget) {
    super();
    this.chain = target.waitReady;
    this.on('newListener', (event) => {
      if (event === 'message') this.forwardMessages = true;
    });
  }

  async connect(): Promise<void> {
    this._connecting = true;
    await this.target.waitReady;
    const before = opened.get(this.target) ?? 0;
    opened.set(this.target, before + 1);
    if (before > 0) {
      for (const text of SESSION_RESET) {
        this.chain = this.chain.then(() =>
          this.target.execProtocolStream(serialize.query(text), { throwOnError: false }),
        );
      }
      try {
        await this.chain;
      } catch (e) {
        process.nextTick(() => this.emit('error', e));
        return;
      }
    }
    process.nextTick(() => this.emit('readyForQuery'));
  }

  // Nothing to negotiate with an embedded engine.
  requestSsl(): void {}
  startup(): void {}
  cancel(): void {}
  password(): void {}
  ref(): void {}
  unref(): void {}

  sendSASLInitialResponseMessage(mechanism: string, initialResponse: string): void {
    this.send(serialize.sendSASLInitialResponseMessage(mechanism, initialResponse));
  }
  sendSCRAMClientFinalMessage(additionalData: string): void {
    this.send(serialize.sendSCRAMClientFinalMessage(additionalData));
  }
  query(text: string): void {
    this.send(serialize.query(text));
  }
  parse(config: Parameters<Serializer['parse']>[0]): void {
    this.send(serialize.parse(config));
  }
  bind(config: Parameters<Serializer['bind']>[0]): void {
    this.send(serialize.bind(config));
  }
  execute(config: Parameters<Serializer['execute']>[0]): void {
    this.send(serialize.execute(config));
  }
  describe(config: Parameters<Serializer['describe']>[0]): void {
    this.send(serialize.describe(config));
  }
  close(config: Parameters<Serializer['close']>[0]): void {
    this.send(serialize.close(config));
  }
  flush(): void {
    this.send(serialize.flush());
  }
  sync(): void {
    this.send(serialize.sync());
  }
  sendCopyFromChunk(chunk: Buffer): void {
    this.send(serialize.copyData(chunk));
  }
  endCopyFrom(): void {
    this.send(serialize.copyDone());
  }
  sendCopyFail(message: string): void {
    this.send(serialize.copyFail(message));
  }

  end(): void {
    this.chain = this.chain.then(() => this.emit('end'));
    for (const event of this.eventNames()) if (event !== 'newListener') this.removeAllListeners(event);
    this.forwardMessages = false;
  }

  private send(message: Uint8Array): void {
    this.chain = this.chain
      .then(() => this.target.execProtocolStream(message, { throwOnError: false }))
      .then((answers) => {
        for (const m of answers) {
          if (this.forwardMessages) this.emit('message', m);
          this.emit(m.name === 'error' ? 'errorMessage' : m.name, m);
        }
      })
      .catch((e: unknown) => {
        this.emit('error', e);
      });
  }
}

/**
 * A pg.Pool configuration whose one connection at a time reaches `target` through a PgliteConnection of its own:
 * a client the pool drops (its `pool.query` failed) ends only its connection, and the next client starts afresh.
 */
export function pgliteConfig(target: ProtocolTarget): pg.PoolConfig {
  return {
    max: 1,
    // An embedded connection holds no socket: kept however long it idles, so the session's prepared statements are
    // (node-postgres' default, 10 s, would make a new client, and a session reset, after every quiet spell).
    idleTimeoutMillis: 0,
    user: 'postgres',
    password: 'dummy',
    database: 'postgres',
    host: 'localhost',
    port: 5432,
    Client: class extends pg.Client {
      constructor(config?: pg.ClientConfig) {
        super({ ...config, connection: new PgliteConnection(target) } as pg.ClientConfig);
      }
    },
  };
}
