// surveyFleet: the fleet report (`holdfast inspect`, the app's fleet view), many nodes at once.
// Bounded parallelism; at most CONNECTS_PER_FIRST_HOP connections set up through the same first
// hop (a bastion's MaxStartups); one deadline per node, covering connect and inventory, started
// when the node's connection is (not while it waits for its bastion); each node on its own (one
// failing never spoils the others); results streamed to onNode as nodes answer, so a UI can fill
// its matrix while slow nodes are still connecting.
import type { NodeDef } from '../../../shared/domain/nodes';
import { nodeWarnings } from '../../../shared/nodeWarnings';
import { archivesReport } from '../../../shared/archivesReport';
import { lostPinsFrom, withLostPins } from '../../audit/lostPins';
import { HoldfastError, toErrorInfo } from '../../errors';
import { inventoryOptions, readInventory, type OpsContext } from '../inventory';
import { NodeSession, resolveJumpChain, type OpenNodeOptions } from '../../node/session';
import { diskOfSession } from './disk';
import { diskPicture } from '../diskPicture';
import { readGuardState } from '../../node/guardState';
import { judgeGuard } from '../../../shared/guardState';
import { nodeRegistries, withMissingPulls } from './registries';
import { withPeerServing } from '../../node/embeddedRegistry';
import { registriesFileOf, registriesNotRead } from '../../node/registries';
import { DriftAccumulator } from '../../../shared/drift';
import { satisfies } from '../../../shared/needs';
import { mapLimit } from '../../../shared/mapLimit';
import { DEFAULT_LOW_DISK, summarizeFleet, type LowDiskRule } from './summary';
import type { FleetNodeResult, FleetReport } from '../../../shared/fleet';
import { DEFAULT_FLEET_CONCURRENCY, DEFAULT_NODE_TIMEOUT_MS } from './defaults';
import { setMaxListeners } from 'node:events';
import { logger } from '../../log';
import { CONNECTS_PER_FIRST_HOP, ConnectGate } from './connectGate';

const log = logger('fleet');

export { DEFAULT_FLEET_CONCURRENCY, DEFAULT_NODE_TIMEOUT_MS };

/**
 * Takes one node's inventory; must stop (and free the connection) when `signal` aborts. Calls
 * `connected` once its session is open, so the next node through the same first hop may start
 * connecting (otherwise that happens when the probe ends).
 */
export type NodeProbe = (def: NodeDef, signal: AbortSignal, timeoutMs: number, connected?: () => void) => Promise<FleetNodeResult>;

export interface FleetOptions {
  ctx: OpsContext;
  /** Nodes inspected at once (default 64); connection set-ups per first hop stay at most 8. */
  concurrency?: number;
  /** Per node, connect + inventory + disk (default 30 000 ms). */
  timeoutMs?: number;
  /** Called once per node as soon as its result is known (reachable or not), in completion order. */
  onNode?: (result: FleetNodeResult) => void;
  /** Called when Holdfast starts connecting to a node. */
  onStart?: (node: string) => void;
  /** Aborting marks nodes not yet answered as unreachable ("cancelled") and closes their connections. */
  signal?: AbortSignal;
  lowDisk?: LowDiskRule;
  /**
   * How sessions are opened: `resolveNode` finds jump hosts (default: among `defs`); pass
   * `credentials` only if someone can answer prompts for many nodes at once. Without it a node
   * that needs a passphrase or password is reported AUTH_FAILED rather than blocking the run.
   */
  open?: Pick<OpenNodeOptions, 'resolveNode' | 'credentials'>;
  /** Replaces the SSH inventory (tests). */
  probe?: NodeProbe;
  /** Opens each node's session for the SSH inventory (default NodeSession.open; UI tests' fake nodes). */
  openSession?: (def: NodeDef, opts: OpenNodeOptions) => Promise<NodeSession>;
  /**
   * Also measure each reached node's disk picture without its images (imagefs, GC thresholds:
   * what the metrics series need), on the inspection's own connection rather than one more later.
   */
  diskPicture?: boolean;
}

export function unreachableResult(node: string, err: unknown): FleetNodeResult {
  return { node, reachable: false, error: toErrorInfo(err), versions: null, images: null, archives: null, importCache: null, disk: null, lostPins: null, warnings: null, needs: null, guard: null };
}

/** The real probe: SSH + containerd inventory + disk, the connection closed before returning. */
export function sshProbe(
  ctx: OpsContext,
  open: Pick<OpenNodeOptions, 'resolveNode' | 'credentials'> = {},
  openSession: (def: NodeDef, opts: OpenNodeOptions) => Promise<NodeSession> = (def, opts) => NodeSession.open(def, opts),
  extras: Pick<FleetOptions, 'diskPicture'> = {},
): NodeProbe {
  return async (def, signal, timeoutMs, connected) => {
    let session: NodeSession | undefined;
    const closeOnAbort = () => void session?.close();
    signal.addEventListener('abort', closeOnAbort, { once: true });
    try {
      session = await openSession(def, { ...open, timeoutMs });
      if (signal.aborted) throw signal.reason;
      connected?.();
      const s = session;
      // readInventory (what `inventory` runs) detects versions in parallel with the listing when
      // not handed them: one round trip less than inventory()'s info-then-list on slow links.
      const [inv, disk, registries, picture, guard] = await Promise.all([
        readInventory(s, inventoryOptions(s, ctx)),
        diskOfSession(s).catch((err: unknown) => (log.debug('disk unknown', { node: def.name, err }), null)),
        nodeRegistries(s).catch((err: unknown) => (log.debug('registries.yaml not read', { node: def.name, err }), toErrorInfo(err).message)),
        extras.diskPicture
          ? diskPicture(s, ctx, { images: false }).then(
              (p) => ({ picture: p, error: null }),
              (err: unknown) => (log.debug('no disk picture', { node: def.name, err }), { picture: null, error: toErrorInfo(err) }),
            )
          : null,
        readGuardState(s.files),
      ]);
      // The audit log is read once for the whole run (AuditLog reads only what was appended since).
      const lostPins = await lostPinsFrom(def.name, ctx.audit, { refs: inv.images, imagesDir: inv.archives, info: inv.info });
      // Which references peers can pull from this node (k3s's embedded registry), by the mirror
      // names of the registries.yaml reading above: the file is read once per node.
      const read = typeof registries === 'string' ? registriesNotRead(registriesFileOf(inv.info.distro), registries) : registries;
      const served = await withPeerServing(s, inv.info, withLostPins(inv.images, lostPins), read).catch((err: unknown) => (log.debug('embedded registry not read', { node: def.name, err }), null));
      // Keep only what the report shows: the scanned files, archive indexes and fate inputs go; the
      // import cache's health is said once for the node, as `archives --json` says it.
      const { importCache, archives } = archivesReport(def.name, inv.archives);
      return {
        node: def.name,
        reachable: true,
        error: null,
        versions: inv.info,
        images: served?.images ?? withLostPins(inv.images, lostPins),
        archives,
        importCache,
        disk,
        lostPins,
        warnings: nodeWarnings(inv.info),
        needs: inv.needs,
        registries: typeof registries === 'string' ? null : withMissingPulls(registries.registries, inv.needs.missing.map((m) => m.ref)),
        embeddedRegistry: served?.embeddedRegistry ?? null,
        guard: judgeGuard(guard, Date.now()),
        ...(picture ? { diskPicture: picture.picture, diskPictureError: picture.error } : {}),
      };
    } finally {
      signal.removeEventListener('abort', closeOnAbort);
      await session?.close().catch((err: unknown) => log.debug('session not closed cleanly', { node: def.name, err }));
    }
  };
}

function cancelledError(def: NodeDef): HoldfastError {
  return new HoldfastError('INTERNAL', `inspection of ${def.name} was cancelled before it answered`);
}

async function surveyNode(def: NodeDef, probe: NodeProbe, timeoutMs: number, parent: AbortSignal | undefined, connected: () => void): Promise<FleetNodeResult> {
  const ac = new AbortController();
  const seconds = Number((timeoutMs / 1000).toFixed(3));
  const timer = setTimeout(
    () =>
      ac.abort(
        new HoldfastError('TIMEOUT', `${def.name} did not answer within ${seconds} s (connect and inventory)`, {
          hint: 'Check that the node is up and reachable, or allow more time with --timeout.',
        }),
      ),
    timeoutMs,
  );
  const onParent = () => ac.abort(cancelledError(def));
  if (parent?.aborted) onParent();
  else parent?.addEventListener('abort', onParent, { once: true });
  const aborted = new Promise<never>((_, reject) => {
    if (ac.signal.aborted) reject(ac.signal.reason);
    else ac.signal.addEventListener('abort', () => reject(ac.signal.reason), { once: true });
  });
  const work = ac.signal.aborted ? aborted : probe(def, ac.signal, timeoutMs, connected);
  work.catch((err: unknown) => log.debug('node inspection failed (reported in its result)', { node: def.name, err }));
  aborted.catch(() => undefined); // only the abort reason, which the race reports
  try {
    return await Promise.race([work, aborted]);
  } catch (e) {
    return unreachableResult(def.name, e);
  } finally {
    clearTimeout(timer);
    connected();
    parent?.removeEventListener('abort', onParent);
    // A probe that lost the race is told to stop and close its connection.
    if (!ac.signal.aborted) ac.abort(new Error('done'));
  }
}

/**
 * Inspects every node (duplicates by name once), at most `concurrency` at a time. Never throws
 * for a node's failure: that node is reported unreachable with its error. The report keeps the
 * nodes in the order of `defs`; drift is computed over the reachable ones.
 */
export async function surveyFleet(defs: NodeDef[], opts: FleetOptions): Promise<FleetReport> {
  const started = performance.now();
  const generatedAt = new Date().toISOString();
  const seen = new Set<string>();
  const list = defs.filter((d) => (seen.has(d.name) ? false : (seen.add(d.name), true)));
  const concurrency = Math.max(1, Math.floor(opts.concurrency ?? DEFAULT_FLEET_CONCURRENCY));
  const timeoutMs = Math.max(1, opts.timeoutMs ?? DEFAULT_NODE_TIMEOUT_MS);
  const byName = new Map(defs.map((d) => [d.name, d]));
  const resolveNode = async (name: string): Promise<NodeDef> => {
    const d = byName.get(name);
    if (!d) throw new HoldfastError('NOT_FOUND', `no node named "${name}" (a jump host)`, { hint: 'Add the jump host as a node too.' });
    return d;
  };
  const probe = opts.probe ?? sshProbe(opts.ctx, { resolveNode, ...opts.open }, opts.openSession, { diskPicture: opts.diskPicture });
  // host:port the node's TCP connection goes to: its own, or its outermost jump host's, by the
  // session's own chain rule. A chain it refuses (the session reports why) is keyed by the jump
  // host's name, so the nodes behind it still queue together.
  const firstHopOf = async (def: NodeDef): Promise<string> => {
    const chain = await resolveJumpChain(def, opts.open?.resolveNode ?? resolveNode).catch(() => null);
    if (!chain) return `jump:${def.jump}`;
    const hop = chain[0] ?? def;
    return `${hop.host}:${hop.port}`;
  };
  const drift = new DriftAccumulator();
  const gate = new ConnectGate(CONNECTS_PER_FIRST_HOP);
  // One listener on the caller's signal; every node (up to two listeners each) listens to the
  // run's own, whose limit fits the concurrency (Node warns past 10 listeners otherwise).
  const run = new AbortController();
  setMaxListeners(2 * concurrency + 10, run.signal);
  const onCancel = () => run.abort(opts.signal?.reason);
  if (opts.signal?.aborted) onCancel();
  else opts.signal?.addEventListener('abort', onCancel, { once: true });
  // Listeners' failures are not the nodes': logged, never allowed to end the run.
  const tell = (what: string, node: string, fn: () => void) => {
    try {
      fn();
    } catch (err) {
      log.debug(`${what} listener failed`, { node, err });
    }
  };
  const results = await mapLimit(list, concurrency, async (def): Promise<FleetNodeResult> => {
    // The node's deadline starts once its first hop lets it connect: a queue at a bastion is not the node's fault.
    const release = await gate.acquire(await firstHopOf(def), run.signal).catch(() => null);
    let r: FleetNodeResult;
    if (!release) r = unreachableResult(def.name, cancelledError(def));
    else {
      tell('onStart', def.name, () => opts.onStart?.(def.name));
      r = await surveyNode(def, probe, timeoutMs, run.signal, release);
    }
    drift.add(r);
    tell('onNode', def.name, () => opts.onNode?.(r));
    return r;
  }).finally(() => opts.signal?.removeEventListener('abort', onCancel));
  withFleetHolders(results);
  const entries = drift.entries(list.map((d) => d.name));
  const rule = opts.lowDisk ?? DEFAULT_LOW_DISK;
  return { generatedAt, summary: summarizeFleet(results, entries, rule, performance.now() - started), nodes: results, drift: entries };
}

/** A needed image a node lacks names the other reached nodes that hold it (where to copy it from). */
export function withFleetHolders(results: FleetNodeResult[]): void {
  for (const r of results) {
    for (const m of r.needs?.missing ?? []) {
      for (const other of results) {
        if (other === r || !other.images?.some((i) => satisfies(m.ref, i))) continue;
        const held = `node ${other.node}`;
        if (!m.heldBy.includes(held)) m.heldBy.push(held);
      }
    }
  }
}
