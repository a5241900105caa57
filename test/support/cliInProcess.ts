// The CLI run in process, as its unit tests drive it: each test gets a Holdfast home of its own
// (HOLDFAST_HOME set before, put back after), and `runCli` keeps what a command printed.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import type { Io } from '../../src/cli/context';
import { main } from '../../src/cli/main';

/** Registers a fresh temporary HOLDFAST_HOME per test; the returned function names the current one. */
export function useTempHome(prefix: string): () => string {
  let home = '';
  let saved: string | undefined;
  beforeEach(() => {
    home = mkdtempSync(path.join(os.tmpdir(), prefix));
    saved = process.env.HOLDFAST_HOME;
    process.env.HOLDFAST_HOME = home;
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.HOLDFAST_HOME;
    else process.env.HOLDFAST_HOME = saved;
    rmSync(home, { recursive: true, force: true });
  });
  return () => home;
}

export interface InProcessRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** `holdfast ARGS` through main; `io` adds to the captured output (e.g. a terminal's columns). */
export async function runCli(args: string[], io: Partial<Omit<Io, 'out' | 'err'>> = {}): Promise<InProcessRun> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['node', 'holdfast', ...args], { ...io, out: (s) => out.push(s), err: (s) => err.push(s) });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}
