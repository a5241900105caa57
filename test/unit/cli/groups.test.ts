// The CLI imports only the file of the command argv names (src/cli/main.ts): the table of names
// must match what each file registers, and help still lists every command.
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { createCli } from '../../../src/cli/context';
import { buildProgram, COMMANDS, commandNamed } from '../../../src/cli/main';

const quiet = { out: () => undefined, err: () => undefined };
const names = (p: Command) => p.commands.map((c) => c.name());

describe('command files', () => {
  it('each registers exactly the top-level command it is named for', async () => {
    for (const c of COMMANDS) {
      const program = new Command('holdfast');
      (await c.load())(program, createCli(quiet));
      expect(names(program)).toEqual([c.name]);
    }
  });

  it('are all loaded for help, a bare `holdfast` or an unknown command; only the named one otherwise', async () => {
    const every = COMMANDS.map((c) => c.name);
    for (const args of [['--help'], [], ['nonsense'], ['help']]) expect(names(await buildProgram(quiet, args)), args.join(' ')).toEqual(every);
    expect(names(await buildProgram(quiet, ['images', 'n1', '--json']))).toEqual(['images']);
    expect(names(await buildProgram(quiet, ['help', 'unpin']))).toEqual(['unpin']);
    expect(names(await buildProgram(quiet, ['--verbose', 'node', 'ls']))).toEqual(['node']);
  });

  it('commandNamed: the first non-option, or the one `help` names', () => {
    expect(commandNamed([])).toBeNull();
    expect(commandNamed(['--help'])).toBeNull();
    expect(commandNamed(['node', 'add', 'x'])).toBe('node');
    expect(commandNamed(['--verbose', 'inspect', '--all'])).toBe('inspect');
    expect(commandNamed(['help', 'pin'])).toBe('pin');
    expect(commandNamed(['help'])).toBeNull();
  });
});
