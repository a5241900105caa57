// The CLI's way into the application service: the same handlers (src/core/service/) that
// Electron main calls over IPC and `holdfast serve` over HTTP, run in this process through the
// same validate → run → envelope step (dispatch), so every rule the service holds applies to the
// CLI as it does to the app; the CLI keeps only the presentation. Long work (upload, import,
// inspect) runs as the service's jobs and fleet runs, followed in process and cancelled on Ctrl-C.
// Loaded when a command first calls an operation: `--help`, a typo and commands that never
// call one start without the service (nor ssh2, grpc-js, protobufjs under it).
import { HoldfastError } from '../core/errors';
import type { Service } from '../core/service';
import type { CredentialsProvider } from '../core/ssh/credentials';
import { HeadStart, openHeadStart } from './headStart';
import { remedyCommand } from './remedyText';
import type { ArgsOf, Channel, Envelope, LiveEvent, ResultOf } from '../shared/contract';
import type { NodeDef } from '../shared/domain/nodes';
import type { LocalNodeOptions } from '../core/node/localSession';

export interface CliService {
  /** Runs one contract operation; its error envelope is thrown as a HoldfastError (main maps its code to the exit code). */
  call<C extends Channel>(channel: C, args: ArgsOf<C>): Promise<ResultOf<C>>;
  /**
   * Follows the service's live events (jobs.changed, fleet.node, fleet.done, local.inspect);
   * returns the unsubscribe. In process every job change is delivered (no throttle).
   */
  subscribe(cb: (e: LiveEvent) => void): Promise<() => void>;
  /**
   * Starts connecting to the node a command names as soon as its arguments parse (see
   * HeadStart); the command's first operation on that node adopts the session. Never fails:
   * whatever goes wrong is left for that operation to meet and report.
   */
  headStart(node: string): void;
  /** Closes the sessions the operations opened and stops what the service still runs (once the command is done, or on Ctrl-C before a job exists). */
  close(): Promise<void>;
}

/** The CLI's service, and how a command puts it on this machine. */
export interface LazyService extends CliService {
  /**
   * `--local`: every operation runs on this machine (Holdfast on the node itself, as root): its
   * one node is this machine, read through containerd's socket and the images dir directly, no
   * SSH (core/node/localSession.ts). Called before the first operation; returns the node.
   */
  useLocal(o: LocalNodeOptions): Promise<NodeDef>;
}

type Loaded = { service: Service; dispatch: (h: Service, channel: string, raw: unknown) => Promise<Envelope<unknown>> };

/**
 * The rules the service holds (argument schemas, forced removal and prune confirmations, lost
 * pins, adopting a detected images dir) hold here too. Long work — `upload` and `import`
 * (jobs.startUpload / jobs.startImport), `inspect` (fleet.start) — runs as the service's jobs and
 * fleet runs; the CLI follows their live events in process (subscribe) and cancels them through
 * the service (jobs.cancel, fleet.cancel) on Ctrl-C.
 */
export function lazyService(): LazyService {
  let loaded: Promise<Loaded> | undefined;
  let closing: Promise<void> | undefined;
  // Passphrases, passwords, keyboard-interactive answers: asked on the terminal, kept nowhere.
  let tty: Promise<CredentialsProvider> | undefined;
  const credentials = () => (tty ??= import('./prompt').then(({ ttyCredentials }) => ttyCredentials()));
  const head = new HeadStart(async (node, whileHandshaking) => openHeadStart(node, await credentials(), whileHandshaking));
  let local: NodeDef | undefined;
  const loadService = async (): Promise<Loaded> => {
    if (local) {
      const [{ createHandlers }, { dispatch }, { dispatchGuards }, { LocalNodeSession }] = await Promise.all([
        import('../core/service'),
        import('../shared/dispatch'),
        import('../core/payload'),
        import('../core/node/localSession'),
      ]);
      // No SSH, so no secrets to ask; a fleet run never asks either.
      const service = createHandlers({ nodes: [local], openSession: (def) => LocalNodeSession.open(def), jobThrottleMs: 0, fleetCredentials: false, remedyCommand });
      return { service, dispatch: (h, channel, raw) => dispatch(h, channel, raw, dispatchGuards) };
    }
    // A command that named its node is connecting already: the service loads during the handshake.
    await head.connecting();
    const [{ createHandlers }, { dispatch }, { dispatchGuards }, { NodeSession }, tty] = await Promise.all([
      import('../core/service'),
      import('../shared/dispatch'),
      import('../core/payload'),
      import('../core/node/session'),
      credentials(),
    ]);
    const service = createHandlers({
      credentials: tty,
      openSession: async (def, opts) => (await head.adopt(def, opts)) ?? NodeSession.open(def, opts),
      // One person at one terminal: every phase of a job is shown, and a fleet run never stops
      // to ask many nodes' secrets at once (a node that needs one is reported AUTH_FAILED).
      jobThrottleMs: 0,
      fleetCredentials: false,
      // A remedy in a refusal or an audit note is said as its command (cli/remedyText).
      remedyCommand,
    });
    return { service, dispatch: (h, channel, raw) => dispatch(h, channel, raw, dispatchGuards) };
  };
  const load = () => (loaded ??= loadService());
  return {
    async call(channel, args) {
      const { service, dispatch } = await load();
      const answer = await dispatch(service, channel, args);
      if (answer.ok) return answer.result as ResultOf<typeof channel>;
      const { code, message, access, ...extra } = answer.error;
      const e = new HoldfastError(code, message, extra);
      if (access) e.access = access;
      throw e;
    },
    async subscribe(cb) {
      const { service } = await load();
      return service.events.subscribe(cb);
    },
    headStart: (node) => {
      if (!local) head.start(node); // a local node has no handshake to start early
    },
    async useLocal(o) {
      if (loaded) throw new HoldfastError('INTERNAL', '--local is set before the first operation');
      const { localNodeDef } = await import('../core/node/localSession');
      local = localNodeDef(o);
      return local;
    },
    close() {
      closing ??= (async () => {
        const l = await loaded?.catch(() => undefined); // a service that failed to load has nothing open
        await l?.service.dispose();
        await head.close();
      })();
      return closing;
    },
  };
}
