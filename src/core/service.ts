// The application service: one handler per contract channel, shared by Electron main (IPC),
// `holdfast serve` (loopback HTTP) and the CLI (in process, src/cli/service.ts). Owns the node
// inventory, live node sessions, jobs (imports, uploads) and fleet runs.
import type { LocalArchive, NodeDef, NodeStatus } from '../shared/domain';
import type { Handlers } from '../shared/handlers';
import path from 'node:path';
import { IndexCache } from './archives/scan';
import { AuditLog } from './audit/log';
import { lostPinsFrom, lostPinsOnNode, withLostPins } from './audit/lostPins';
import { holdfastHome } from './config/home';
import { NodeStore } from './config/nodes';
import { HoldfastError, toErrorInfo } from './errors';
import { createNeedsResolver } from './needs/resolve';
import { applyPinChange, checkRemoval, imagesInventory, inventory, planPinChange, removeArchiveSafely, type OpsContext } from './node/operations';
import { imagesDirFiles } from './node/inspect';
import { SessionPool, type OpenSession } from './node/pool';
import { importToNodes } from './import/fleet';
import { summary as importSummary } from './import/run';
import { uploadArchive } from './upload';
import { uploadJobPatch } from './upload/progress';
import { inspectLocalArchive } from './import/inspectLocal';
import { JobManager } from './jobs/manager';
import { createLiveHub } from './live';
import type { LiveEvent } from '../shared/contract';
import type { FleetReport } from '../shared/fleet';
import { randomUUID } from 'node:crypto';
import { CredentialBroker } from './credentials/broker';
import type { CredentialsProvider } from './ssh/credentials';
import { fleetCsv, fleetHtml, inspectFleet } from './fleet';
import { diskPicture } from './disk/picture';
import { applyPrune, planPruneOnNode } from './disk/prune';
import { DEFAULT_KEEP_VERSIONS } from '../shared/imageVersions';
import { importOptionsProblem } from '../shared/importOptions';
import { selectNodes } from '../shared/nodeSelection';
import { logger } from './log';

const log = logger('service');

export interface Service extends Handlers {
  /** Live events (node.status, node.changed, jobs.changed, fleet.node/done, local.inspect, credentials.request); node watchers run while someone listens. */
  events: { subscribe(cb: (e: LiveEvent) => void): () => void };
  dispose(): Promise<void>;
}

export interface ServiceOptions {
  home?: string;
  /** A native "open files" dialog; only the desktop app has one. */
  pickArchives?: () => Promise<string[]>;
  /** Opens node sessions (default: NodeSession.open over SSH); UI tests pass fake nodes here. */
  openSession?: OpenSession;
  /**
   * Who answers a node's secrets (passphrases, passwords, keyboard-interactive). Absent (the
   * app, `serve`): the UI is asked through credentials.request events. The CLI asks on its terminal.
   */
  credentials?: CredentialsProvider;
  /**
   * Minimum spacing of jobs.changed per running job (default 200 ms, what a window needs). The
   * CLI, in process, passes 0: it shows every phase a job goes through.
   */
  jobThrottleMs?: number;
  /**
   * false: a fleet run never asks for a secret (a node that needs one is AUTH_FAILED) — the CLI,
   * whose one terminal cannot answer many nodes at once. Default: it asks like any connection.
   */
  fleetCredentials?: boolean;
}

/** How often the local inspection's progress goes out as a local.inspect event. */
const INSPECT_EVENT_MS = 100;

export function createHandlers(opts: ServiceOptions = {}): Service {
  const home = opts.home ?? holdfastHome();
  const store = new NodeStore(home);
  // Secrets the app needs while connecting are asked in the UI (credentials.request event).
  let emit: (e: LiveEvent) => void = () => undefined;
  const broker = new CredentialBroker((request) => emit({ type: 'credentials.request', payload: request }));
  const credentials = opts.credentials ?? broker.provider;
  const pool = new SessionPool((name) => store.get(name), { credentials }, opts.openSession);
  const audit = new AuditLog(home);
  const indexCache = new IndexCache(path.join(home, 'cache', 'archive-index'));
  const ctx: OpsContext = { audit, indexCache };
  ctx.needs = createNeedsResolver({ home, nodes: () => store.list(), use: (node, fn) => pool.use(node, fn) });
  const jobs = new JobManager();
  // Nodes whose pins this service is changing right now: the lost-pin watch waits for them, so
  // Holdfast's own unpin (labels first, audit entry right after) is never reported as a loss.
  const changingPins = new Map<string, number>();
  const whileChangingPins = async <T>(node: string, fn: () => Promise<T>): Promise<T> => {
    changingPins.set(node, (changingPins.get(node) ?? 0) + 1);
    try {
      return await fn();
    } finally {
      const n = (changingPins.get(node) ?? 1) - 1;
      if (n > 0) changingPins.set(node, n);
      else changingPins.delete(node);
    }
  };
  const live = createLiveHub(pool, jobs, opts.jobThrottleMs !== undefined ? { jobThrottleMs: opts.jobThrottleMs } : {}, {
    durablePins: (node) => audit.durablePins(node),
    lostPins: (node) => pool.use(node, (s) => lostPinsOnNode(s, audit, { indexCache })),
    busy: (node) => changingPins.has(node),
  });
  emit = (e) => live.emit(e);
  // One inventory: the references (each with the lost pin that concerns it), every lost pin
  // (also those whose reference is gone) and the versions the node runs.
  const imagesReport = (node: string) =>
    pool.use(node, async (s) => {
      const inv = await imagesInventory(s, ctx);
      const lost = await lostPinsFrom(node, audit, { refs: inv.images, imagesDir: imagesDirFiles(inv), info: inv.info });
      return { images: withLostPins(inv.images, lost), lost, info: inv.info, needs: inv.needs };
    });
  let lastFleet: FleetReport | null = null;
  let fleetRun: { runId: string; abort: AbortController; cancelled: boolean } | null = null;
  // Aborted by dispose: what the service still reads on this machine stops with it.
  const disposing = new AbortController();
  // The archive on this machine, read once before a job starts (a refusal sends nothing), its
  // progress as local.inspect events.
  const inspectArchive = (p: string) => {
    let last = 0;
    return inspectLocalArchive(p, {
      signal: disposing.signal,
      onRead: (bytesRead, size) => {
        const now = Date.now();
        if (bytesRead < size && now - last < INSPECT_EVENT_MS) return;
        last = now;
        emit({ type: 'local.inspect', payload: { path: p, bytesRead, size } });
      },
    });
  };
  const jobArchive = (a: LocalArchive) => ({ path: a.path, size: a.size, sha256: a.sha256, format: a.format, compression: a.compression, images: a.images.length });
  const knownNodes = async (nodes: string[]) => {
    for (const n of nodes) await store.get(n);
  };

  return {
    'nodes.list': async () => store.list(),
    'nodes.add': async ({ node }) => store.add(node),
    'nodes.update': async ({ name, node, expect }) => {
      // expect is compared field by field with the saved node, as the caller read it (not completed).
      const def = await store.update(name, node, expect ? { expect: expect as NodeDef } : {});
      live.unwatch(name);
      await pool.drop(name);
      return def;
    },
    'nodes.remove': async ({ name }) => {
      await store.remove(name);
      live.unwatch(name);
      await pool.drop(name);
      return { removed: name };
    },
    'nodes.connect': async ({ name }): Promise<NodeStatus> => {
      await store.get(name); // an unknown node is an error, not a status
      live.pause(name); // the fresh session replaces the one its watcher used
      try {
        const session = await pool.get(name, { fresh: true });
        const info = await session.detect();
        // A node added without an images dir follows its distro's data-dir (from this same
        // probe); when that moved it, the session reads the new dir from now on (no second
        // connection, so no second password prompt).
        const moved = await store.adoptImagesDir(name, info.imagesDir);
        if (moved) session.followImagesDir(moved.imagesDir);
        live.restart(name);
        return { name, state: 'connected', info };
      } catch (e) {
        live.unwatch(name);
        await pool.drop(name);
        return { name, state: 'error', error: toErrorInfo(e) };
      }
    },
    'nodes.trustHostKey': async ({ name, fingerprint }) => {
      const def = await store.get(name);
      // Connect once accepting exactly the key the user saw; the SSH layer records it in the
      // node's known_hosts only if the presented key has that fingerprint.
      await pool.drop(name);
      await pool.get(name, { acceptNewHostKey: fingerprint });
      return { recorded: def.knownHosts! };
    },
    'images.list': async ({ node }) => (await imagesReport(node)).images,
    'images.report': async ({ node }) => imagesReport(node),
    'nodes.info': async ({ node }) => pool.use(node, (s) => s.info()),
    'pins.lost': async ({ node }) => pool.use(node, (s) => lostPinsOnNode(s, audit, { indexCache })),
    'archives.list': async ({ node }) => pool.use(node, async (s) => (await inventory(s, ctx)).archives),
    'pins.plan': async ({ node, action, target }) => pool.use(node, (s) => planPinChange(s, ctx, action, target)),
    'pins.apply': async ({ node, action, target }) => whileChangingPins(node, () => pool.use(node, (s) => applyPinChange(s, ctx, action, target))),
    'archives.check': async ({ node, path: p }) => pool.use(node, async (s) => (await checkRemoval(s, ctx, p)).check),
    'archives.remove': async ({ node, path: p, force, confirm }) => {
      // Forcing past the safety check needs the path typed again, so it is never a misclick.
      if (force && confirm !== p) {
        throw new HoldfastError('REFUSED', 'forced removal needs the archive path typed exactly as confirmation', { hint: `Type ${p} to confirm.` });
      }
      return pool.use(node, (s) => removeArchiveSafely(s, ctx, p, { force: Boolean(force) }));
    },
    'audit.list': async ({ node }) => audit.list(node),
    'local.pickArchives': async () => {
      if (!opts.pickArchives) {
        throw new HoldfastError('INVALID_INPUT', 'there is no file dialog in the browser UI', { hint: "Type or paste the archive's full path instead." });
      }
      return { paths: await opts.pickArchives() };
    },
    'local.inspect': async ({ path: p }) => {
      const { index: _index, ...archive } = await inspectLocalArchive(p);
      return archive;
    },
    'jobs.startImport': async ({ nodes, path: p, pin, removeArchive, parallel, timeout }) => {
      await knownNodes(nodes);
      const problem = importOptionsProblem({ pin, removeArchive });
      if (problem) throw new HoldfastError('INVALID_INPUT', problem, { hint: 'Make the pins durable too ("make pins durable" in the app, --pin on the command line).' });
      // Refuse a bad archive before the job starts: nothing is sent.
      const archive = await inspectArchive(p);
      return jobs.start(
        {
          kind: 'import',
          title: `Import ${path.basename(archive.path)} to ${nodes.length === 1 ? nodes[0] : `${nodes.length} nodes`}`,
          nodes,
          archive: jobArchive(archive),
          options: { pin, removeArchive, ...(parallel !== undefined ? { parallel } : {}), ...(timeout !== undefined ? { timeout } : {}) },
        },
        async (job) => {
          const outcomes = await importToNodes(
            nodes,
            // A node that fails shows so at once, while the others carry on.
            (n, fn) => pool.use(n, fn).catch((e: unknown) => (job.fail(n, e), Promise.reject(e))),
            ctx,
            archive,
            {
              pin,
              removeArchive,
              ...(parallel !== undefined ? { parallel } : {}),
              ...(timeout !== undefined ? { importTimeoutMs: timeout * 1000 } : {}),
              signal: job.signal,
              onNode: (n, patch) => job.update(n, patch),
            },
          );
          for (const o of outcomes) {
            if (!o.ok) {
              job.fail(o.node, o.error);
              continue;
            }
            const r = o.result;
            job.update(o.node, {
              result: {
                relPath: r.relPath,
                sha256: r.sha256,
                uploaded: r.uploaded,
                resumedFrom: r.resumedFrom,
                summary: r.skipped ?? importSummary(r),
                ...(r.renamed ? { renamed: r.renamed } : {}),
                ...(r.warnings?.length ? { warnings: r.warnings } : {}),
              },
            });
          }
        },
      );
    },
    'jobs.startUpload': async ({ node, path: p, as }) => {
      await knownNodes([node]);
      // Refuse a bad archive before the job starts: nothing is sent.
      const archive = await inspectArchive(p);
      const remoteName = as ?? path.basename(archive.path);
      return jobs.start(
        {
          kind: 'upload',
          title: `Upload ${path.basename(archive.path)} to ${node}`,
          nodes: [node],
          archive: jobArchive(archive),
          options: { pin: false, removeArchive: false, ...(as !== undefined ? { as } : {}) },
        },
        async (job) => {
          job.update(node, { state: 'running', phase: 'checking', message: 'connecting' });
          // No second try on a fresh session when the link drops: the upload fails saying so, and
          // the same request resumes from what the node kept.
          const session = await pool.get(node);
          const r = await uploadArchive(session, archive.path, {
            remoteName,
            expectedSha256: archive.sha256,
            signal: job.signal,
            onProgress: (u) => job.update(node, { state: 'running', ...uploadJobPatch(u) }),
            onNotice: (notice) => job.update(node, { notice }),
          });
          const summary = r.alreadyPresent ? `${r.relPath} was already there` : `uploaded ${r.relPath}${r.resumedFrom ? ` (resumed from byte ${r.resumedFrom})` : ''}, sha256 verified on the node`;
          job.update(node, {
            state: 'succeeded',
            phase: 'done',
            message: summary,
            result: { relPath: r.relPath, sha256: r.sha256, uploaded: !r.alreadyPresent, resumedFrom: r.resumedFrom, summary },
          });
        },
      );
    },
    'jobs.list': async () => jobs.list(),
    'jobs.cancel': async ({ id }) => {
      const job = jobs.cancel(id);
      if (!job) throw new HoldfastError('NOT_FOUND', `no job ${id}`);
      return job;
    },
    events: { subscribe: (cb) => live.subscribe(cb) },
    'credentials.answer': async ({ id, answers }) => {
      broker.answer(id, answers);
      return { answered: true };
    },
    'credentials.pending': async () => broker.open(),
    'fleet.start': async ({ nodes, group, concurrency, timeout }) => {
      const sel = selectNodes(await store.list(), { names: nodes, group });
      if ('problem' in sel) throw new HoldfastError(sel.problem.code, sel.problem.message, { hint: sel.problem.hint });
      const defs = sel.nodes;
      // One run at a time: a new one replaces the last, which then reports nothing.
      fleetRun?.abort.abort();
      const runId = randomUUID();
      const run = { runId, abort: new AbortController(), cancelled: false };
      fleetRun = run;
      // Results stream to the UI as nodes answer; the run goes on if the window goes away.
      void inspectFleet(defs, {
        ctx,
        signal: run.abort.signal,
        // In the app a node that needs a secret asks for it; the dialog queues several prompts.
        open: { resolveNode: (n) => store.get(n), ...(opts.fleetCredentials === false ? {} : { credentials }) },
        ...(opts.openSession ? { openSession: opts.openSession } : {}),
        ...(concurrency !== undefined ? { concurrency } : {}),
        ...(timeout !== undefined ? { timeoutMs: Math.round(timeout * 1000) } : {}),
        onNode: (result) => emit({ type: 'fleet.node', payload: { runId, result } }),
      })
        .then((report) => {
          if (run.abort.signal.aborted && !run.cancelled) return;
          lastFleet = report;
          emit({ type: 'fleet.done', payload: { runId, report } });
        })
        .catch((err: unknown) => log.debug('fleet run failed', { runId, err }));
      return { runId, nodes: defs.map((d) => d.name) };
    },
    'fleet.cancel': async ({ runId }) => {
      const run = fleetRun?.runId === runId ? fleetRun : null;
      if (!run || run.abort.signal.aborted) return { cancelled: false };
      run.cancelled = true;
      run.abort.abort();
      return { cancelled: true };
    },
    'fleet.last': async () => lastFleet,
    'disk.picture': async ({ node, images }) => pool.use(node, (s) => diskPicture(s, ctx, { images: images !== false })),
    'prune.plan': async ({ node, keepVersions }) => pool.use(node, (s) => planPruneOnNode(s, ctx, { keepVersions: keepVersions ?? DEFAULT_KEEP_VERSIONS })),
    'prune.apply': async ({ node, keepVersions, images, confirm }) => {
      // Removing images from an air-gapped node needs its name typed, so it is never a misclick.
      if (confirm !== node) throw new HoldfastError('REFUSED', "prune needs the node's name typed exactly as confirmation", { hint: `Type ${node} to confirm.` });
      return pool.use(node, (s) => applyPrune(s, ctx, { keepVersions: keepVersions ?? DEFAULT_KEEP_VERSIONS, expect: images }));
    },
    'fleet.export': async ({ format }) => {
      if (!lastFleet) throw new HoldfastError('NOT_FOUND', 'no fleet report yet', { hint: 'Inspect the fleet first.' });
      const stamp = lastFleet.generatedAt.replace(/[:.]/g, '-');
      if (format === 'html') return { filename: `holdfast-fleet-${stamp}.html`, mime: 'text/html', content: fleetHtml(lastFleet) };
      if (format === 'csv') return { filename: `holdfast-fleet-${stamp}.csv`, mime: 'text/csv', content: fleetCsv(lastFleet) };
      return { filename: `holdfast-fleet-${stamp}.json`, mime: 'application/json', content: JSON.stringify(lastFleet, null, 2) };
    },
    dispose: async () => {
      disposing.abort();
      fleetRun?.abort.abort();
      broker.close();
      live.close();
      await jobs.cancelAll();
      await pool.closeAll();
    },
  };
}
