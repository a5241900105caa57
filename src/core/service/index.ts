// The application service: one handler per contract channel, shared by Electron main (IPC),
// `holdfast serve` (loopback HTTP) and the CLI (in process, src/cli/service.ts). This is its one
// composition root: it builds the parts every concern shares (./parts.ts) — node store, session
// pool, audit log, archive index cache, needs resolver, task runner with the job manager, live
// hub — and puts together the concerns' handlers: nodes, images and pins, jobs, fleet, disk, signatures.
import path from 'node:path';
import type { LiveEvent } from '../../shared/contract';
import { IndexCache } from '../archives/scan';
import { AuditLog } from '../audit/log';
import { lostPinsOnNode } from '../audit/lostPins';
import { holdfastHome } from '../config/home';
import { FixedNodeStore } from '../config/fixedNodes';
import { NodeStore } from '../config/nodes';
import { CredentialBroker } from '../credentials/broker';
import { JobManager } from '../jobs/manager';
import { TaskRunner } from '../jobs/tasks';
import { createLiveHub } from '../live';
import { createNeedsResolver } from '../needs/resolve';
import { SessionPool } from '../node/pool';
import type { OpsContext } from '../usecases/inventory';
import { diskHandlers } from './disk';
import { fleetHandlers } from './fleet';
import { imageHandlers } from './images';
import { jobHandlers } from './jobs';
import { nodeHandlers } from './nodes';
import { signatureHandlers } from './signatures';
import { PinChanges, type Service, type ServiceOptions, type ServiceParts } from './parts';

export type { Service, ServiceOptions } from './parts';

export function createHandlers(opts: ServiceOptions = {}): Service {
  const home = opts.home ?? holdfastHome();
  const store = opts.nodes ? new FixedNodeStore(home, opts.nodes) : new NodeStore(home);
  // Secrets the app needs while connecting are asked in the UI (credentials.request event).
  let emit: (e: LiveEvent) => void = () => undefined;
  const broker = new CredentialBroker((request) => emit({ type: 'credentials.request', payload: request }));
  const credentials = opts.credentials ?? broker.provider;
  const pool = new SessionPool((name) => store.get(name), { credentials }, opts.openSession);
  const audit = new AuditLog(home);
  const indexCache = new IndexCache(path.join(home, 'cache', 'archive-index'));
  const ctx: OpsContext = { audit, indexCache, ...(opts.remedyCommand ? { word: opts.remedyCommand } : {}) };
  ctx.needs = createNeedsResolver({ home, nodes: () => store.list(), use: (node, fn) => pool.use(node, fn) });
  const tasks = new TaskRunner();
  const jobs = new JobManager(tasks);
  const pinChanges = new PinChanges();
  const live = createLiveHub(pool, jobs, opts.jobThrottleMs !== undefined ? { jobThrottleMs: opts.jobThrottleMs } : {}, {
    durablePins: (node) => audit.durablePins(node),
    lostPins: (node) => pool.use(node, (s) => lostPinsOnNode(s, audit, { indexCache })),
    busy: (node) => pinChanges.busy(node),
  });
  emit = (e) => live.emit(e);
  const disposing = new AbortController();
  const parts: ServiceParts = { opts, store, pool, audit, indexCache, ctx, broker, credentials, tasks, jobs, live, emit, disposing: disposing.signal, pinChanges };

  return {
    ...nodeHandlers(parts),
    ...imageHandlers(parts),
    ...jobHandlers(parts),
    ...fleetHandlers(parts),
    ...diskHandlers(parts),
    ...signatureHandlers(parts),
    events: { subscribe: (cb) => live.subscribe(cb) },
    dispose: async () => {
      disposing.abort();
      // Every job and fleet run is stopped at once (before the hub and the broker close, so a
      // stopped run reports nothing more); then the sessions close once their work is over.
      const stopped = tasks.stopAll('disposed');
      broker.close();
      live.close();
      await stopped;
      await pool.closeAll();
    },
  };
}
