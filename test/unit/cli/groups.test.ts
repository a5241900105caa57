// The CLI imports only the command group argv names (src/cli/main.ts): the table of names must
// match what each group registers, and help still lists every command.
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { createCli } from '../../../src/cli/context';
import { buildProgram, COMMAND_GROUPS, commandNamed } from '../../../src/cli/main';

const quiet = { out: () => undefined, err: () => undefined };
const names = (p: Command) => p.commands.map((c) => c.name());

describe('command groups', () => {
  it('name exactly the top-level commands each group registers', async () => {
    for (const g of COMMAND_GROUPS) {
      const program = new Command('holdfast');
      (await g.load())(program, createCli(quiet));
      expect(names(program).sort()).toEqual([...g.commands].sort());
    }
  });

  it('are all loaded for help, a bare `holdfast` or an unknown command; only the named one otherwise', async () => {
    const every = COMMAND_GROUPS.flatMap((g) => g.commands);
    for (const args of [['--help'], [], ['nonsense'], ['help']]) expect(names(await buildProgram(quiet, args)), args.join(' ')).toEqual(every);
    expect(names(await buildProgram(quiet, ['images', 'n1', '--json']))).toEqual(['images', 'archives']);
    expect(names(await buildProgram(quiet, ['help', 'unpin']))).toEqual(['pin', 'unpin', 'rm-archive']);
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
