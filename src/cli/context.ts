// What every command needs: output, the service's operations (call), and — for the commands the
// contract has no operation for (upload, import, inspect, node add's check) — the node store,
// sessions and the ops context.
// SSH and containerd (ssh2, grpc-js, protobufjs) are imported when a session opens, so commands
// that never reach a node start without them.
import path from 'node:path';
import { IndexCache } from '../core/archives/indexCache';
import { AuditLog } from '../core/audit/log';
import { holdfastHome } from '../core/config/home';
import { HoldfastError } from '../core/errors';
import type { OpsContext } from '../core/node/operations';
import type { NodeSession } from '../core/node/session';
import type { AcceptNewHostKey } from '../core/ssh/hostKey';
import type { LabelChange, NodeDef } from '../shared/domain';
import { terminalSafe } from './format';
import { lazyNodeStore, type Store } from './nodeStore';
import { lazyService, type CliService } from './service';

export interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
}

// The terminal sink: whatever a line holds (node-controlled names, error output), no control
// character reaches the terminal (terminalSafe keeps line feeds and tabs).
const line = (s: string) => terminalSafe(s.endsWith('\n') ? s : s + '\n', { keepLines: true });
export const defaultIo: Io = {
  out: (s) => process.stdout.write(line(s)),
  err: (s) => process.stderr.write(line(s)),
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

/** "k: before → after" lines for the labels a change touches. */
export function describeChange(c: LabelChange, indent = '    '): string {
  const keys = [...new Set([...Object.keys(c.before), ...Object.keys(c.after)])].filter((k) => c.before[k] !== c.after[k]).sort();
  const v = (s: string | undefined) => (s === undefined ? '(absent)' : terminalSafe(s));
  return keys.map((k) => `${indent}${terminalSafe(k)}: ${v(c.before[k])} → ${v(c.after[k])}`).join('\n');
}

export interface Cli extends CliService {
  io: Io;
  store(): Store;
  opsContext(): OpsContext;
  /** Opens a session to a configured node for the duration of fn. */
  onNode<T>(name: string, fn: (s: NodeSession, ctx: OpsContext) => Promise<T>): Promise<T>;
}

export function createCli(io: Io): Cli {
  const store = () => lazyNodeStore(holdfastHome());
  const opsContext = (): OpsContext => {
    const home = holdfastHome();
    return { audit: new AuditLog(home), indexCache: new IndexCache(path.join(home, 'cache', 'archive-index')) };
  };
  const service = lazyService();
  return {
    io,
    call: (channel, args) => service.call(channel, args),
    close: () => service.close(),
    store,
    opsContext,
    async onNode(name, fn) {
      const def = await store().get(name);
      const ctx = opsContext();
      return withSession(def, (s) => fn(s, ctx));
    },
  };
}
