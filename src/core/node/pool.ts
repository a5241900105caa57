// Keeps at most one live NodeSession per node and replaces sessions that have closed.
import type { NodeDef } from '../../shared/domain/nodes';
import { NodeSession, type OpenNodeOptions } from './session';
import { logger } from '../log';
import { HoldfastError } from '../errors';

const log = logger('node');

/** Opens one node's session: NodeSession.open over SSH, or a stand-in (UI tests' fake nodes). */
export type OpenSession = (def: NodeDef, opts: OpenNodeOptions) => Promise<NodeSession>;

export class SessionPool {
  private readonly sessions = new Map<string, Promise<NodeSession>>();
  /** Set by closeAll: nothing opens afterwards (a late call would keep the process alive). */
  private closed = false;

  constructor(
    private readonly lookup: (name: string) => Promise<NodeDef>,
    private readonly openOpts: OpenNodeOptions = {},
    private readonly openSession: OpenSession = (def, opts) => NodeSession.open(def, opts),
  ) {}

  async get(name: string, opts: OpenNodeOptions & { fresh?: boolean } = {}): Promise<NodeSession> {
    if (this.closed) throw new HoldfastError('UNREACHABLE', `the connections were closed: ${name} is not connected again`);
    const existing = this.sessions.get(name);
    if (existing && !opts.fresh && opts.acceptNewHostKey === undefined) {
      const s = await existing.catch((err: unknown) => log.debug('earlier session failed to open; opening anew', { node: name, err }));
      if (s && !s.isClosed) return s;
    }
    if (existing) await this.drop(name);
    const { fresh: _fresh, ...open } = opts;
    // Jump hosts are configured nodes too: the same lookup resolves a chain.
    const p = this.lookup(name).then((def) => this.openSession(def, { resolveNode: this.lookup, ...this.openOpts, ...open }));
    this.sessions.set(name, p);
    p.catch(() => {
      if (this.sessions.get(name) === p) this.sessions.delete(name);
    });
    return p;
  }

  /** Runs fn on the node's session; a dropped connection is retried once on a new one. */
  async use<T>(name: string, fn: (s: NodeSession) => Promise<T>): Promise<T> {
    const s = await this.get(name);
    try {
      return await fn(s);
    } catch (e) {
      // The connection dropped under the call (not a containerd or input error): one fresh try.
      if (s.isClosed && !this.closed) {
        return fn(await this.get(name, { fresh: true }));
      }
      throw e;
    }
  }

  async drop(name: string): Promise<void> {
    const p = this.sessions.get(name);
    this.sessions.delete(name);
    const s = await p?.catch((err: unknown) => log.debug('dropped a session that had failed to open', { node: name, err }));
    await s?.close();
  }

  async closeAll(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.sessions.keys()].map((n) => this.drop(n)));
  }
}
