// One output path (#47 item 3): -o table|wide|json, with --wide and --json as its aliases. The
// format is decided once, before the command runs; a bad value or flags that disagree are a usage
// error (exit 2) that names the choices.
import { describe, expect, it } from 'vitest';
import { commandNamed } from '../../../src/cli/main';
import { outputFormat } from '../../../src/cli/output';
import { runCli, useTempHome } from '../../support/cliInProcess';

useTempHome('hf-cli-output-');
const run = (...args: string[]) => runCli(args);

describe('-o and its aliases', () => {
  it('-o json is --json, before or after the command', async () => {
    expect((await run('node', 'add', 'edge', '--host', '10.0.0.7', '--no-check')).code).toBe(0);
    const json = await run('node', 'ls', '--json');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([expect.objectContaining({ name: 'edge', host: '10.0.0.7' })]);
    for (const args of [['node', 'ls', '-o', 'json'], ['-o', 'json', 'node', 'ls'], ['--output=json', 'node', 'ls'], ['node', 'ls', '-o', 'json', '--json']]) {
      expect(await run(...args), args.join(' ')).toEqual(json);
    }
  });

  it('-o wide is --wide, and -o table the default', async () => {
    expect((await run('node', 'add', 'edge', '--host', '10.0.0.7', '--no-check')).code).toBe(0);
    const table = await run('node', 'ls');
    expect(table.code).toBe(0);
    expect(table.stdout).toContain('edge');
    expect(await run('node', 'ls', '-o', 'table')).toEqual(table);
    const wide = await run('node', 'ls', '--wide');
    expect(await run('node', 'ls', '-o', 'wide')).toEqual(wide);
    expect(await run('-o', 'wide', '--wide', 'node', 'ls')).toEqual(wide);
  });

  it('a value that is no format is a usage error naming the choices', async () => {
    const r = await run('node', 'ls', '-o', 'yaml');
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('Allowed choices are table, wide, json.');
  });

  it('flags that disagree are a usage error, and so is JSON from a command that has none', async () => {
    for (const args of [['node', 'ls', '--json', '--wide'], ['-o', 'table', 'node', 'ls', '--json'], ['node', 'ls', '-o', 'wide', '--json'], ['-o', 'json', '--wide', 'node', 'ls']]) {
      const r = await run(...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr, args.join(' ')).toContain('ask for different output: give one of -o table|wide|json');
    }
    const metrics = await run('-o', 'json', 'metrics');
    expect(metrics.code).toBe(2);
    expect(metrics.stderr).toContain('metrics has no JSON output (-o json)');
  });

  it('outputFormat: one format from the flags, table when none', () => {
    expect(outputFormat({})).toEqual({ format: 'table' });
    expect(outputFormat({ json: true })).toEqual({ format: 'json' });
    expect(outputFormat({ wide: true })).toEqual({ format: 'wide' });
    expect(outputFormat({ output: 'json', json: true })).toEqual({ format: 'json' });
    expect(outputFormat({ output: 'table', wide: true })).toEqual({ error: '-o table and --wide ask for different output: give one of -o table|wide|json' });
  });

  it("commandNamed skips -o's value", () => {
    expect(commandNamed(['-o', 'json', 'images', 'n1'])).toBe('images');
    expect(commandNamed(['--output', 'wide', 'node', 'ls'])).toBe('node');
    expect(commandNamed(['-ojson', 'log'])).toBe('log');
  });
});
