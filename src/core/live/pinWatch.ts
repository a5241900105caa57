// Live detection of pins lost behind Holdfast's back. The live hub hands every image event of a
// watched node here; an event about a reference Holdfast holds a durable pin on, and that does
// not show it still durable, makes the node suspect. Once the node's events have settled (an
// import or a prune is a burst; Holdfast's own unpin writes its audit entry right after its
// label updates) the node's lost pins are computed afresh with the one rule (shared/lostPins)
// and the new ones among the suspects are reported, once each.
import type { LostPin } from '../../shared/domain/lostPins';
import { pinState } from '../../shared/pinState';
import type { PinRecord } from '../../shared/lostPins';
import type { EventEnvelope } from '../containerd/client';
import { logger } from '../log';

const log = logger('live');

export interface PinWatchOptions {
  /** The durable pins Holdfast holds on the node (the audit ledger: cheap to ask). */
  durablePins(node: string): Promise<PinRecord[]>;
  /** The node's lost pins now (lists the node). */
  lostPins(node: string): Promise<LostPin[]>;
  /** Holdfast itself is changing pins on the node: wait until it has logged what it did. */
  busy?(node: string): boolean;
  /** Quiet time after the last suspicious event before the node is checked (default 1500 ms). */
  settleMs?: number;
  /** New losses, at most once per reference, kind and pin. */
  onLost(node: string, lost: LostPin[]): void;
}

const keyOf = (l: Pick<LostPin, 'ref' | 'kind' | 'pinnedAt'>) => `${l.ref}\0${l.kind}\0${l.pinnedAt}`;

/** Does the event itself show the reference still durably pinned (an update that kept the pin)? */
function stillDurable(e: EventEnvelope): boolean {
  const labels = e.image?.labels;
  if (!labels || e.topic === '/images/delete') return false;
  return pinState(labels) === 'durable';
}

interface NodeState {
  suspects: Set<string>;
  timer: ReturnType<typeof setTimeout> | null;
  /** Losses already reported (and still lost at the last check). */
  reported: Set<string>;
  checking: boolean;
}

export class PinWatch {
  private readonly nodes = new Map<string, NodeState>();
  private closed = false;

  constructor(private readonly opts: PinWatchOptions) {}

  private state(node: string): NodeState {
    let s = this.nodes.get(node);
    if (!s) this.nodes.set(node, (s = { suspects: new Set(), timer: null, reported: new Set(), checking: false }));
    return s;
  }

  /** One image event of a watched node. */
  onEvent(node: string, e: EventEnvelope): void {
    const name = e.image?.name;
    if (this.closed || !name || !e.topic.startsWith('/images/') || stillDurable(e)) return;
    void this.opts
      .durablePins(node)
      .then((pins) => {
        if (this.closed || !pins.some((p) => p.ref === name)) return;
        this.state(node).suspects.add(name);
        this.schedule(node);
      })
      .catch((err: unknown) => log.debug('durable pins not read; event not checked for a lost pin', { node, name, err }));
  }

  private schedule(node: string): void {
    const s = this.state(node);
    if (s.timer) clearTimeout(s.timer);
    s.timer = setTimeout(() => {
      s.timer = null;
      void this.check(node);
    }, this.opts.settleMs ?? 1500);
  }

  private async check(node: string): Promise<void> {
    const s = this.state(node);
    if (this.closed || s.suspects.size === 0) return;
    if (s.checking || this.opts.busy?.(node)) {
      this.schedule(node);
      return;
    }
    s.checking = true;
    const suspects = s.suspects;
    s.suspects = new Set();
    try {
      const lost = await this.opts.lostPins(node);
      if (this.closed || !this.nodes.has(node)) return;
      const fresh = lost.filter((l) => suspects.has(l.ref) && !s.reported.has(keyOf(l)));
      // Forget what is no longer lost, so a pin lost again later is reported again.
      s.reported = new Set(lost.filter((l) => s.reported.has(keyOf(l)) || fresh.includes(l)).map(keyOf));
      if (fresh.length) this.opts.onLost(node, fresh);
    } catch (err) {
      // The node is unreachable right now: the suspects wait for the next event or resync.
      log.debug('lost-pin check failed; suspects kept for the next try', { node, suspects: [...suspects], err });
      for (const r of suspects) s.suspects.add(r);
    } finally {
      s.checking = false;
    }
  }

  /** Stop following a node (unwatched, removed, edited). */
  forget(node: string): void {
    const s = this.nodes.get(node);
    if (s?.timer) clearTimeout(s.timer);
    this.nodes.delete(node);
  }

  close(): void {
    this.closed = true;
    for (const n of [...this.nodes.keys()]) this.forget(n);
  }
}
