// Live events for the UI: one watcher per watched node, subscribed to that node's containerd
// event stream (image topics of its namespace only: Events.Subscribe streams EVERY namespace
// unless filtered), turning image events into `node.changed` and connection changes into
// `node.status`. After an SSH drop or a containerd restart the open Subscribe fails (code 14
// within milliseconds): the watcher reconnects with exponential backoff (1 s → 30 s, jitter).
// Watchers run only while something listens (a window, an SSE client); the last listener
// leaving stops them all, and a new listener starts them again.
import type { LiveEvent, NodeLiveStatus } from '../../shared/contract';
import type { ErrorInfo } from '../../shared/domain/errors';
import type { Job } from '../../shared/domain/jobs';
import type { EventEnvelope, EventSubscription } from '../containerd/client';
import { toErrorInfo } from '../errors';
import { logger } from '../log';

const log = logger('live');

/** What a watcher needs from a node connection (a NodeSession in the app, a fake in tests). */
export interface LiveConnection {
  namespace: string;
  /** A cheap call proving containerd answers through the tunnel (e.g. Version). */
  ping(): Promise<unknown>;
  subscribe(filters: string[]): EventSubscription;
  info?(): Promise<NodeLiveStatus['info']>;
}

export interface BackoffOptions {
  baseMs: number;
  maxMs: number;
  /** ± fraction of the delay, e.g. 0.2 → 0.8…1.2 × delay. */
  jitter: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 1000, maxMs: 30_000, jitter: 0.2 };

/** Delay before retry `attempt` (1-based): base·2^(attempt−1), capped, then jittered (never above max). */
export function backoffDelay(attempt: number, opts: BackoffOptions = DEFAULT_BACKOFF, random: () => number = Math.random): number {
  const raw = Math.min(opts.maxMs, opts.baseMs * 2 ** Math.max(0, attempt - 1));
  const jittered = raw * (1 - opts.jitter + 2 * opts.jitter * random());
  return Math.round(Math.min(opts.maxMs, Math.max(opts.baseMs * (1 - opts.jitter), jittered)));
}

/** Errors retrying cannot fix: the user has to act (trust a key, fix credentials, re-add the node). */
export function isPermanent(e: ErrorInfo): boolean {
  return e.code === 'HOST_KEY_UNKNOWN' || e.code === 'HOST_KEY_CHANGED' || e.code === 'AUTH_FAILED' || e.code === 'NOT_FOUND' || e.code === 'INVALID_INPUT';
}

export interface LiveHubOptions {
  open(node: string): Promise<LiveConnection>;
  backoff?: BackoffOptions;
  random?: () => number;
  /** A connection that stayed up this long resets the backoff (a flapping link does not). */
  stableMs?: number;
  /** Minimum spacing of jobs.changed per job while it runs (finished states go out at once). */
  jobThrottleMs?: number;
  /** Also handed every image event of a watched node (e.g. the lost-pin watch, ./pinWatch.ts). */
  imageEvents?: ImageEventSink;
}

/** What follows a node's image events besides the hub's own node.changed. */
export interface ImageEventSink {
  onEvent(node: string, e: EventEnvelope): void;
  /** The node is no longer watched. */
  forget(node: string): void;
  close(): void;
}

type Listener = (e: LiveEvent) => void;

class Watcher {
  private gen = 0;
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private sub: EventSubscription | null = null;
  private connectedAt = 0;
  private everConnected = false;
  status: NodeLiveStatus;

  constructor(
    readonly node: string,
    private readonly hub: LiveHub,
    private readonly opts: Required<Pick<LiveHubOptions, 'open' | 'backoff' | 'random' | 'stableMs'>>,
  ) {
    this.status = { name: node, state: 'connecting' };
  }

  start(): void {
    this.stop(false);
    this.attempt = 0;
    void this.connect();
  }

  /** Cancel the subscription and any retry; emits `stopped` when asked. */
  stop(announce: boolean): void {
    this.gen++;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const sub = this.sub;
    this.sub = null;
    sub?.cancel();
    if (announce) this.set({ name: this.node, state: 'stopped' });
  }

  private set(status: NodeLiveStatus): void {
    this.status = status;
    this.hub.emit({ type: 'node.status', payload: status });
  }

  private async connect(): Promise<void> {
    const gen = ++this.gen;
    this.set({ name: this.node, state: 'connecting', ...(this.attempt ? { attempt: this.attempt } : {}) });
    try {
      const conn = await this.opts.open(this.node);
      if (gen !== this.gen) return;
      await conn.ping();
      if (gen !== this.gen) return;
      // Image topics of this node's namespace only (a quoted value: namespaces may contain dots).
      const sub = conn.subscribe([`namespace==${JSON.stringify(conn.namespace)},topic~="^/images/"`]);
      this.sub = sub;
      sub.on('event', (e: EventEnvelope) => {
        if (gen !== this.gen || e.namespace !== conn.namespace || !e.topic.startsWith('/images/')) return;
        this.hub.emit({ type: 'node.changed', payload: { node: this.node, topic: e.topic, name: e.image?.name ?? '' } });
        this.hub.imageEvent(this.node, e);
      });
      sub.on('error', (err) => this.dropped(gen, toErrorInfo(err)));
      sub.on('end', () => this.dropped(gen, { code: 'UNREACHABLE', message: `the event stream of ${this.node} ended` }));
      const info = await conn.info?.().catch((err: unknown) => log.debug('node versions unknown after (re)connect', { node: this.node, err }));
      if (gen !== this.gen) return;
      const wasReconnect = this.everConnected;
      this.everConnected = true;
      this.connectedAt = Date.now();
      this.set({ name: this.node, state: 'connected', ...(info ? { info } : {}) });
      // Events may have been missed while the link was down: tell the UI to reload once.
      if (wasReconnect) this.hub.emit({ type: 'node.changed', payload: { node: this.node, topic: 'resync', name: '' } });
    } catch (e) {
      if (gen !== this.gen) return;
      this.dropped(gen, toErrorInfo(e));
    }
  }

  private dropped(gen: number, error: ErrorInfo): void {
    if (gen !== this.gen) return;
    this.gen++; // later error/end callbacks of this subscription are stale
    const sub = this.sub;
    this.sub = null;
    sub?.cancel();
    if (isPermanent(error)) {
      this.set({ name: this.node, state: 'error', error });
      return;
    }
    if (this.connectedAt && Date.now() - this.connectedAt >= this.opts.stableMs) this.attempt = 0;
    this.connectedAt = 0;
    this.attempt++;
    const retryInMs = backoffDelay(this.attempt, this.opts.backoff, this.opts.random);
    this.set({ name: this.node, state: 'reconnecting', attempt: this.attempt, retryInMs, error });
    const retryGen = this.gen;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (retryGen === this.gen) void this.connect();
    }, retryInMs);
  }
}

export class LiveHub {
  private readonly listeners = new Set<Listener>();
  /** Nodes the UI connected to (wanted), whether or not a watcher runs right now. */
  private readonly wanted = new Set<string>();
  private readonly watchers = new Map<string, Watcher>();
  private readonly opts: Required<Pick<LiveHubOptions, 'open' | 'backoff' | 'random' | 'stableMs'>>;
  private readonly jobThrottleMs: number;
  private readonly pendingJobs = new Map<string, { job: Job; timer: ReturnType<typeof setTimeout> | null; last: number }>();
  private readonly imageEvents: ImageEventSink | undefined;

  constructor(opts: LiveHubOptions) {
    this.opts = {
      open: opts.open,
      backoff: opts.backoff ?? DEFAULT_BACKOFF,
      random: opts.random ?? Math.random,
      stableMs: opts.stableMs ?? 10_000,
    };
    this.jobThrottleMs = opts.jobThrottleMs ?? 200;
    this.imageEvents = opts.imageEvents;
  }

  /** An image event of a watched node, for the image event sink (a failing sink never stops the watcher). */
  imageEvent(node: string, e: EventEnvelope): void {
    try {
      this.imageEvents?.onEvent(node, e);
    } catch (err) {
      // ignored: node.changed already went out
      log.debug('image event sink failed', { node, topic: e.topic, err });
    }
  }

  /** Listen to every live event. The first listener starts the watchers; the last one leaving stops them. */
  subscribe(cb: Listener): () => void {
    this.listeners.add(cb);
    if (this.listeners.size === 1) for (const n of this.wanted) this.startWatcher(n);
    // A new listener learns the current state of every running watcher at once.
    for (const w of this.watchers.values()) cb({ type: 'node.status', payload: w.status });
    return () => {
      if (!this.listeners.delete(cb)) return;
      if (this.listeners.size === 0) this.stopAll(false);
    };
  }

  get listening(): boolean {
    return this.listeners.size > 0;
  }

  /** Nodes with a running watcher (for tests and diagnostics). */
  watching(): string[] {
    return [...this.watchers.keys()];
  }

  /** Watch a node (idempotent while it runs): called when the UI connected to it. */
  watch(node: string): void {
    this.wanted.add(node);
    if (this.listening && !this.watchers.has(node)) this.startWatcher(node);
  }

  /** Restart a node's watcher from attempt 0 (after the user connected again). */
  restart(node: string): void {
    this.wanted.add(node);
    if (!this.listening) return;
    const w = this.watchers.get(node);
    if (w) w.start();
    else this.startWatcher(node);
  }

  /** Stop watching quietly while the caller replaces the node's connection; watch() resumes. */
  pause(node: string): void {
    const w = this.watchers.get(node);
    if (!w) return;
    w.stop(false);
    this.watchers.delete(node);
  }

  /** Forget a node (removed, edited, or the user's connect failed). */
  unwatch(node: string): void {
    this.wanted.delete(node);
    this.imageEvents?.forget(node);
    const w = this.watchers.get(node);
    if (!w) return;
    w.stop(true);
    this.watchers.delete(node);
  }

  emit(event: LiveEvent): void {
    for (const l of [...this.listeners]) {
      try {
        l(event);
      } catch (err) {
        // One broken listener (a closed window) must not starve the others.
        log.debug('live event listener failed', { type: event.type, err });
      }
    }
  }

  /** jobs.changed, throttled per job while it runs; a finished job is sent at once. */
  jobChanged(job: Job): void {
    if (!this.listening) return;
    const finished = job.state !== 'running' && job.state !== 'queued';
    const p = this.pendingJobs.get(job.id) ?? { job, timer: null, last: 0 };
    p.job = job;
    this.pendingJobs.set(job.id, p);
    const flush = () => {
      if (p.timer) clearTimeout(p.timer);
      p.timer = null;
      p.last = Date.now();
      if (finished) this.pendingJobs.delete(job.id);
      this.emit({ type: 'jobs.changed', payload: p.job });
    };
    if (finished || Date.now() - p.last >= this.jobThrottleMs) flush();
    else p.timer ??= setTimeout(flush, this.jobThrottleMs - (Date.now() - p.last));
  }

  close(): void {
    this.imageEvents?.close();
    this.stopAll(false);
    this.listeners.clear();
    this.wanted.clear();
  }

  private startWatcher(node: string): void {
    const w = new Watcher(node, this, this.opts);
    this.watchers.set(node, w);
    w.start();
  }

  private stopAll(announce: boolean): void {
    for (const w of this.watchers.values()) w.stop(announce);
    this.watchers.clear();
    for (const p of this.pendingJobs.values()) if (p.timer) clearTimeout(p.timer);
    this.pendingJobs.clear();
  }
}
