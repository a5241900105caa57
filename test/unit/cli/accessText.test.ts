// How a node's refusal is worded where it is read (#49): after any command, node edit on the saved
// node; in node add and node edit, the same command again with the flag it lacks, each value
// quoted as a shell reads it back.
import { execFileSync } from 'node:child_process';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { checkHint, givenArgs, savedNodeHint } from '../../../src/cli/accessText';
import { acceptNewHostKeyOption } from '../../../src/cli/hostKeys';

const FP = `SHA256:${'A'.repeat(43)}`;
const HOP_FP = `SHA256:${'B'.repeat(43)}`;

/** `node add` with the options whose kinds matter here, parsed as commander parses the real one. */
function parsedAdd(argv: string[]): Command {
  const program = new Command().exitOverride();
  const add = program
    .command('node')
    .command('add')
    .argument('<name>')
    .requiredOption('--host <host>')
    .option('--port <port>', 'SSH port', (v) => Number(v), 22)
    .option('--user <user>', 'SSH user', 'root')
    .addOption(acceptNewHostKeyOption())
    .option('--group <group>')
    .option('--sudo')
    .option('--no-check')
    .action(() => undefined);
  program.parse(['node', 'holdfast', 'node', 'add', ...argv]);
  return add;
}

/** The words sh makes of a line (quotes undone). */
const shWords = (line: string) => execFileSync('sh', ['-c', `printf '%s\\0' ${line}`], { encoding: 'utf8' }).split('\0').slice(0, -1);

describe('givenArgs', () => {
  it('gives back what was typed, defaults left out, a fingerprint flag as it is taken', () => {
    const add = parsedAdd(['n1', '--host', '10.0.0.1', '--user', 'ops', '--group', "site a's", `--accept-new-host-key=${FP}`, '--no-check']);
    expect(givenArgs(add)).toEqual(['node', 'add', 'n1', '--host', '10.0.0.1', '--user', 'ops', `--accept-new-host-key=${FP}`, '--group', "site a's", '--no-check']);
  });
});

describe('checkHint (node add, node edit)', () => {
  it('sudo: the same command plus --sudo, every value quoted so sh reads it back as typed', () => {
    const argv = givenArgs(parsedAdd(['n1', '--host', '10.0.0.1', '--user', 'ops', '--group', "a'b; touch /tmp/x"]));
    const hint = checkHint({ hint: 'Core says why.', access: { action: 'sudo', node: 'n1' } }, { name: 'n1' }, argv)!;
    const line = /^Core says why\. To use sudo: (holdfast .*)$/.exec(hint)![1]!;
    expect(line).not.toContain('node edit');
    expect(shWords(line)).toEqual(['holdfast', 'node', 'add', 'n1', '--host', '10.0.0.1', '--user', 'ops', '--group', "a'b; touch /tmp/x", '--sudo']);
  });

  it('a host key: re-run with the flag, for the hop when the key is a jump host\'s', () => {
    expect(checkHint({ hint: 'Check it.', access: { action: 'trust-host-key', node: 'n1', fingerprint: FP } }, { name: 'n1' }, [])).toBe(`Check it. To trust it, re-run with --accept-new-host-key=${FP}.`);
    expect(checkHint({ hint: 'Check it.', access: { action: 'trust-host-key', node: 'bastion', fingerprint: HOP_FP } }, { name: 'n1' }, [])).toBe(
      `Check it. To trust it, re-run with --accept-new-host-key=${HOP_FP} for bastion (one such flag per new host of the chain; repeat the flag).`,
    );
  });
});

describe('savedNodeHint (any other command)', () => {
  it('names node edit on the node (whose key it is, or that needs sudo); other hints stay as they are', () => {
    const hint = savedNodeHint({ hint: 'Check it.', access: { action: 'trust-host-key', node: "odd name'", fingerprint: FP } })!;
    expect(hint).toMatch(/^Check it\. To trust it: holdfast node edit /);
    expect(shWords(hint.slice('Check it. To trust it: '.length))).toEqual(['holdfast', 'node', 'edit', "odd name'", `--accept-new-host-key=${FP}`]);
    expect(savedNodeHint({ hint: 'As core says.', access: { action: 'sudo', node: 'n1' } })).toBe('As core says. To use sudo: holdfast node edit n1 --sudo');
    expect(savedNodeHint({ hint: 'As core says.' })).toBe('As core says.');
  });
});
