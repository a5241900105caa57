// Shared by the benchmarks: time a command as an operator would run it, and take medians.
import { spawn } from 'node:child_process';

/** Runs argv to completion; resolves with wall time and stdout, rejects on an unexpected exit code. */
export function timeCmd(argv: string[], env: NodeJS.ProcessEnv = {}, okCodes = [0]): Promise<{ ms: number; out: string }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const c = spawn(argv[0]!, argv.slice(1), { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => (err += d));
    c.on('close', (code) => (okCodes.includes(code ?? -1) ? resolve({ ms: performance.now() - t0, out }) : reject(new Error(`${argv.join(' ')}: exit ${code}: ${err}`))));
  });
}

export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
