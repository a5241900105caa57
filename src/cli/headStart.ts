// A session opened ahead of the operation that will use it. A cold `holdfast images NODE` spends
// most of its SSH handshake waiting on the node (sshd forks, reads its keys, answers). The
// service and its operations (fleet, import, upload…: tens of milliseconds of module evaluation
// on a slow laptop) used to load first, and the connection only started after; with a head start
// the command's arguments parse, the connection starts, and that loading runs while the node
// thinks. The session is the one the operation would have opened: the same definition, the same
// credentials provider, no new host key accepted. The service's pool adopts it only for that node
// and definition (adopt), and one nobody adopted is closed with the command.
import type { NodeSession, OpenNodeOptions } from '../core/node/session';
import type { CredentialsProvider } from '../core/ssh/credentials';
import type { NodeDef } from '../shared/domain/nodes';
import { logger } from '../core/log';

const log = logger('cli');

/** What a head start opened: the definition it read and the session under way. */
export interface Started {
  def: NodeDef;
  session: Promise<NodeSession>;
}

/** Opens `node`'s session; `whileHandshaking` runs once its SSH handshake is under way. */
export type StartSession = (node: string, whileHandshaking: () => void) => Promise<Started>;

/** The real opener: the node's definition from the user's node list, NodeSession.open with the terminal's credentials. */
export async function openHeadStart(node: string, credentials: CredentialsProvider, whileHandshaking: () => void): Promise<Started> {
  const [{ NodeSession }, { NodeStore }, { holdfastHome }] = await Promise.all([import('../core/node/session'), import('../core/config/nodes'), import('../core/config/home')]);
  const store = new NodeStore(holdfastHome());
  const def = await store.get(node);
  return { def, session: NodeSession.open(def, { credentials, resolveNode: (name) => store.get(name), whileHandshaking }) };
}

export class HeadStart {
  private pending: Promise<Started | undefined> | undefined;
  private underway: Promise<void> | undefined;
  private taken = false;

  constructor(private readonly startSession: StartSession) {}

  /** Starts connecting to `node`; only the first call of a command counts. Never throws, never rejects. */
  start(node: string): void {
    if (this.pending) return;
    let begun!: () => void;
    this.underway = new Promise<void>((resolve) => (begun = resolve));
    this.pending = (async () => {
      try {
        const started = await this.startSession(node, () => begun());
        log.debug('connecting ahead of the operation', { node });
        // Adopted (and then reported) by the operation, or closed with the command.
        started.session.then(
          () => begun(),
          (err: unknown) => (begun(), log.debug('head-start connection failed; the operation meets the same', { node, err })),
        );
        return started;
      } catch (err) {
        begun();
        log.debug('no head start', { node, err });
        return undefined;
      }
    })();
  }

  /**
   * Settles once the head start's SSH handshake is under way, or it failed, or there is none:
   * the CLI loads its service then, while the handshake waits on the node.
   */
  connecting(): Promise<void> {
    return this.underway ?? Promise.resolve();
  }

  /**
   * The head-start session (its failure, if it failed: the same the operation would meet), once,
   * for the node and definition it was opened for, and only when no host key is to be accepted
   * (that decision belongs to the operation's own connection); else undefined.
   */
  async adopt(def: NodeDef, opts: OpenNodeOptions): Promise<NodeSession | undefined> {
    const started = await this.pending;
    if (!started || this.taken || opts.acceptNewHostKey !== undefined || JSON.stringify(started.def) !== JSON.stringify(def)) return undefined;
    this.taken = true;
    return started.session;
  }

  /** Closes the head-start session unless an operation adopted it (the service closes those). */
  async close(): Promise<void> {
    const started = await this.pending;
    if (!started || this.taken) return;
    this.taken = true;
    const s = await started.session.catch(() => undefined);
    await s?.close();
  }
}
