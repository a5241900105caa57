// Small process helpers for the lab. Every command is an argv array: nothing is ever
// interpolated into a shell string.
import { spawn } from 'node:child_process';

export interface RunOptions {
  input?: Buffer | string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

export class CommandError extends Error {
  constructor(
    readonly argv: string[],
    readonly code: number | null,
    readonly stderr: string,
    readonly stdout: string,
  ) {
    super(stderr.trim() || `${argv[0]} exited with ${code}`);
    this.name = 'CommandError';
  }
}

/** Runs argv, resolves stdout as a Buffer; rejects with a CommandError carrying stderr. */
export function runBuffer(argv: string[], opts: RunOptions = {}): Promise<Buffer> {
  const [cmd, ...args] = argv;
  if (!cmd) return Promise.reject(new Error('empty argv'));
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: opts.env ?? process.env,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    if (opts.timeoutMs) {
      timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs);
    }
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', (e) => {
      if (timer) clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      if (timer) clearTimeout(timer);
      const stdout = Buffer.concat(out);
      if (code === 0) resolve(stdout);
      else reject(new CommandError(argv, code, Buffer.concat(err).toString('utf8'), stdout.toString('utf8')));
    });
    child.stdin.on('error', () => {
      /* the child may exit before reading everything; the exit code tells */
    });
    if (opts.input !== undefined) child.stdin.end(opts.input);
    else child.stdin.end();
  });
}

export async function run(argv: string[], opts: RunOptions = {}): Promise<string> {
  return (await runBuffer(argv, opts)).toString('utf8');
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
