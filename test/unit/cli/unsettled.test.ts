// A command whose work never settles must not end the process with exit 0 (issue #51: an upload
// cut at the wrong moment exited 0 with nothing done). Real Node processes: the event loop
// empties with a promise pending, which is how that exit 0 came about.
import { spawnSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { failWhenUnsettled } from '../../../src/cli/exit';

const root = path.resolve(import.meta.dirname, '..', '..', '..');

/** Runs `body` as an ES module under tsx, from the repository root. */
function node(body: string) {
  return spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', body], { cwd: root, encoding: 'utf8', timeout: 60_000 });
}

describe('a command still under way when the event loop empties', () => {
  it('without the guard, Node exits 0 as the standalone executable awaits main (exe.ts), 13 under a top-level await', () => {
    expect(node('void new Promise(() => {}).then((c) => (process.exitCode = c));').status).toBe(0);
    expect(node('process.exitCode = await new Promise(() => {});').status).toBe(13);
  });

  it('with it, the process says so and exits 1', () => {
    const r = node(
      [
        "import { failWhenUnsettled } from './src/cli/exit.ts';",
        'let running = true;',
        'failWhenUnsettled(() => running, (l) => console.error(l));',
        'process.exitCode = await new Promise(() => {});',
      ].join('\n'),
    );
    expect(r.stderr).toMatch(/^holdfast: the command stopped without finishing: .*did not succeed/m);
    expect(r.status).toBe(1);
  });

  it('a command that finished ends with its own code, untouched', () => {
    const r = node(
      [
        "import { failWhenUnsettled } from './src/cli/exit.ts';",
        'let running = true;',
        'failWhenUnsettled(() => running, (l) => console.error(l));',
        'process.exitCode = await new Promise((r) => setTimeout(() => { running = false; r(3); }, 10));',
      ].join('\n'),
    );
    expect(r.stderr).toBe('');
    expect(r.status).toBe(3);
  });

  it('only while running() says so', () => {
    const proc = new EventEmitter();
    const lines: string[] = [];
    const codes: number[] = [];
    let running = false;
    failWhenUnsettled(() => running, (l) => lines.push(l), (c) => codes.push(c), proc);
    proc.emit('beforeExit', 0);
    expect(codes).toEqual([]);
    running = true;
    proc.emit('beforeExit', 0);
    expect(codes).toEqual([1]);
    expect(lines).toHaveLength(1);
  });
});
