// What every command needs: output, the service's operations (call, and subscribe for the live
// events of its jobs and fleet runs), and — for what the contract has no operation for (node
// add's and edit's check, the bulk node imports) — the node store and sessions.
// SSH and containerd (ssh2, grpc-js, protobufjs) are imported when a session opens, so commands
// that never reach a node start without them.
import { holdfastHome } from '../core/config/home';
import { HoldfastError } from '../core/errors';
import type { NodeSession } from '../core/node/session';
import type { AcceptNewHostKey } from '../core/ssh/hostKey';
import type { NodeDef } from '../shared/domain/nodes';
import { terminalSafe } from './format';
import type { OutputFormat } from './output';
import { Screen } from './screen';
import { lazyNodeStore, type Store } from './nodeStore';
import { lazyService, type LazyService } from './service';

export interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  /**
   * The width of the terminal `out` writes to, or null when it writes elsewhere (a pipe, a file).
   * Absent (a test's io): not a terminal.
   */
  columns?: () => number | null;
  /** The same for the terminal `err` writes to. */
  errColumns?: () => number | null;
}

// The terminal sink: whatever a line holds (node-controlled names, error output), no control
// character reaches the terminal (terminalSafe keeps line feeds and tabs).
const line = (s: string) => terminalSafe(s.endsWith('\n') ? s : s + '\n', { keepLines: true });
export const defaultIo: Io = {
  out: (s) => process.stdout.write(line(s)),
  err: (s) => process.stderr.write(line(s)),
  // A terminal that reports no size is taken as the classic 80 columns.
  columns: () => (process.stdout.isTTY ? process.stdout.columns || 80 : null),
  errColumns: () => (process.stderr.isTTY ? process.stderr.columns || 80 : null),
};

export function parsePort(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new HoldfastError('INVALID_INPUT', `invalid port "${v}"`);
  return n;
}

export async function withSession<T>(def: NodeDef, fn: (s: NodeSession) => Promise<T>, acceptNewHostKey?: AcceptNewHostKey): Promise<T> {
  const [{ NodeSession }, { ttyCredentials }] = await Promise.all([import('../core/node/session'), import('./prompt')]);
  const session = await NodeSession.open(def, {
    ...(acceptNewHostKey !== undefined ? { acceptNewHostKey } : {}),
    // Passphrases, passwords, keyboard-interactive answers: asked on the terminal, kept nowhere.
    credentials: ttyCredentials(),
    // Jump hosts are configured nodes too.
    resolveNode: (name) => lazyNodeStore(holdfastHome()).get(name),
  });
  try {
    return await fn(session);
  } finally {
    await session.close();
  }
}

/**
 * The preAction hook of a command whose first argument is the one node it works on: once the
 * arguments parse, the connection starts while the rest of the command loads (CliService.headStart).
 */
export const connectsFirstNode =
  (cli: Cli) =>
  (_self: unknown, action: { processedArgs: unknown[] }): void => {
    const node = action.processedArgs[0];
    if (typeof node === 'string' && node) cli.headStart(node);
  };

export interface Cli extends LazyService {
  io: Io;
  store(): Store;
  /** -o (or --json, --wide): how results print (set by the program before a command runs, src/cli/output.ts). */
  output: OutputFormat;
  /** -o wide (--wide): nothing is fitted to the terminal. */
  readonly wide: boolean;
  /** How this command's output is laid out: for a terminal of some width, or as it always was. */
  screen(): Screen;
  /** The same for what it writes to stderr (notes, warnings), which may go elsewhere than stdout. */
  errScreen(): Screen;
}

export function createCli(io: Io): Cli {
  const store = () => lazyNodeStore(holdfastHome());
  const service = lazyService();
  return {
    io,
    output: 'table',
    get wide() {
      return this.output === 'wide';
    },
    screen() {
      const columns = io.columns?.() ?? null;
      return columns === null ? Screen.plain : new Screen(true, this.wide ? null : columns);
    },
    errScreen() {
      const columns = io.errColumns?.() ?? null;
      return columns === null ? Screen.plain : new Screen(true, this.wide ? null : columns);
    },
    call: (channel, args) => service.call(channel, args),
    subscribe: (cb) => service.subscribe(cb),
    headStart: (node) => service.headStart(node),
    useLocal: (o) => service.useLocal(o),
    close: () => service.close(),
    store,
  };
}
