// cli/remedyText: core's remedy data (shared/remedy) worded as the commands that help (issue #49,
// item 3; #47, item 2): every value a node supplies quoted, so a shell reads back what was meant.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { cliProse, errorHint, remedyCommand, reasonWithRemedy, remedyHint, remedyText } from '../../../src/cli/remedyText';
import { mayNotReadError } from '../../../src/core/access/refusals';
import { inImagesDir } from '../../../src/core/archives/imagesDirPath';
import { HoldfastError } from '../../../src/core/errors';
import { archiveRemedy } from '../../../src/shared/archiveRemedy';
import { commandLine } from '../../../src/cli/commandLine';
import type { Remedy, RemedyOf } from '../../../src/shared/remedy';

const remedy: RemedyOf<'k3s-start-or-direct'> = { action: 'k3s-start-or-direct', node: 'n1', archive: "site's app.tar", distro: 'rke2' };
const NODE = "edge $(touch pwned) it's";
const ARCHIVE = 'x;touch${IFS}pwned;.tar.gz';

/** The argv a real sh sees for a command line (printf stands in for the command). */
const argvSeenBySh = (line: string) => execFileSync('sh', ['-c', `printf '%s\\0' ${line}`], { encoding: 'utf8' }).split('\0').slice(0, -1);

describe('remedyCommand', () => {
  it('quotes a node-supplied archive and node name: sh reads back the intended argv, and nothing runs', () => {
    const cases: [Remedy, string[]][] = [
      [{ action: 'pin', node: NODE, archive: ARCHIVE }, ['pin', NODE, '--archive', ARCHIVE]],
      [{ action: 'import', node: NODE, archive: ARCHIVE }, ['import', NODE, ARCHIVE]],
      [{ action: 'remove-archive', node: NODE, archive: ARCHIVE }, ['rm-archive', NODE, ARCHIVE]],
      [{ action: 'archives', node: NODE }, ['archives', NODE]],
      [{ action: 'sudo', node: NODE }, ['node', 'edit', NODE, '--sudo']],
      [{ action: 'node-edit', node: NODE, group: ARCHIVE }, ['node', 'edit', NODE, '--group', ARCHIVE]],
    ];
    for (const [r, argv] of cases) expect(argvSeenBySh(remedyCommand(r))).toEqual(['holdfast', ...argv]);
    expect(remedyCommand({ action: 'remove-archive', node: 'edge-01', archive: ARCHIVE })).toBe("holdfast rm-archive edge-01 'x;touch${IFS}pwned;.tar.gz'");
  });

  it("prints an archive's remedy as the command its reasons quote", () => {
    const r = archiveRemedy({ node: NODE, path: ARCHIVE, images: [{ name: 'app:1', present: true, complete: true, durable: false, missing: [] }] })!;
    expect(remedyCommand(r)).toBe(commandLine(['pin', NODE, '--archive', ARCHIVE]));
  });

  it("words a sentence's remedy where the sentence left it, in parentheses, quoted", () => {
    const p = { text: 'app:1 is pinned by k3s only: make its pins durable first', remedy: { action: 'pin', node: NODE, archive: ARCHIVE } as const, end: '. (and 1 more)' };
    expect(cliProse(p)).toBe(`app:1 is pinned by k3s only: make its pins durable first (${remedyCommand(p.remedy)}). (and 1 more)`);
    expect(cliProse('Every image it brings is complete.')).toBe('Every image it brings is complete.');
  });

  it('leaves placeholders bare', () => {
    expect(remedyCommand({ action: 'pin', node: 'NODE', needed: true })).toBe('holdfast pin NODE --needed');
    expect(remedyCommand({ action: 'pin', node: 'NODE', allK3s: true })).toBe('holdfast pin NODE --all-k3s');
    expect(remedyCommand({ action: 'import', node: 'NODE', archive: 'ARCHIVE' })).toBe('holdfast import NODE ARCHIVE');
    expect(remedyCommand({ action: 'node-add', node: 'NAME', host: 'HOST' })).toBe('holdfast node add NAME --host HOST');
  });
});

describe('remedyHint: the hint sentences the CLI has always printed', () => {
  it('words each remedy core hands out', () => {
    expect(remedyHint({ action: 'node-list', purpose: 'add' })).toBe('List nodes with `holdfast node ls`; add one with `holdfast node add`.');
    expect(remedyHint({ action: 'node-list', purpose: 'edit-again' })).toBe('Look at it with `holdfast node ls`, then run the edit again.');
    expect(remedyHint({ action: 'node-list', purpose: 'fix-jump' })).toBe('Fix the jump setting of one of these nodes (holdfast node ls shows them).');
    expect(remedyHint({ action: 'node-list' })).toBe('List nodes with `holdfast node ls`.');
    expect(remedyHint({ action: 'node-add', node: 'bastion', jumpOf: 'n1' })).toBe("Add bastion with `holdfast node add`, or change n1's jump host.");
    expect(remedyHint({ action: 'node-add', node: 'NAME', host: 'HOST' })).toBe('Add one with `holdfast node add NAME --host HOST`.');
    expect(remedyHint({ action: 'node-edit', node: 'NAME', group: 'G' })).toBe('No node has a group yet: set one with `holdfast node edit NAME --group G`.');
    expect(remedyHint({ action: 'run-as-root' })).toBe('Run Holdfast as root on the node (sudo holdfast … --local).');
    expect(remedyHint({ action: 'archives', node: ARCHIVE })).toBe("List archives with `holdfast archives 'x;touch${IFS}pwned;.tar.gz'`.");
  });

  it("keeps core's words where the remedy is worded elsewhere (an access remedy, an import's)", () => {
    expect(errorHint({ hint: 'As core says.', remedy })).toBe('As core says.');
    expect(errorHint({ hint: 'As core says.' })).toBe('As core says.');
    expect(errorHint({ hint: 'Run Holdfast as root on the node.', remedy: { action: 'run-as-root' } })).toBe('Run Holdfast as root on the node (sudo holdfast … --local).');
  });
});

describe('remedyText', () => {
  it('names the distro start and the direct delivery, every path quoted', () => {
    expect(remedyText(remedy, "/tmp/it's here/app.tar")).toBe(
      "restart RKE2 on n1, whose start imports site's app.tar, then run this import again; or, without RKE2: holdfast import n1 '/tmp/it'\\''s here/app.tar' --direct, then holdfast rm-archive n1 'site'\\''s app.tar'",
    );
  });
});

describe("core's refusals, worded where they are read", () => {
  it('says the command in the sentence the terminal has always printed; core says none', () => {
    const read = mayNotReadError({ user: 'u', node: 'ea2ns', folder: '/d', imagesDir: '/d' });
    expect(read.hint).not.toContain('holdfast');
    expect(errorHint(read)).toBe("Reach the images dir through sudo (the node's sudo option: holdfast node edit ea2ns --sudo; the user needs password-less sudo), or connect as a user who may read it, such as root.");
    expect(errorHint(mayNotReadError({ user: 'root', node: 'n', folder: '/d', imagesDir: '/d' }))).toMatch(/^Something other than its mode refuses root/);
    let outside: unknown;
    try {
      inImagesDir('/var/lib/rancher/k3s/agent/images', '/tmp/app.tar', 'n1');
    } catch (e) {
      outside = e;
    }
    expect(outside).toBeInstanceOf(HoldfastError);
    expect((outside as HoldfastError).hint).not.toContain('holdfast');
    expect(errorHint(outside as HoldfastError)).toBe('Give a path inside /var/lib/rancher/k3s/agent/images, absolute or relative to it (as `holdfast archives n1` lists them).');
    expect(remedyHint({ action: 'archives', node: 'n1', missing: 'app.tar' })).toBe('List the images dir with `holdfast archives n1`.');
  });
});

describe('a reason completed by its remedy', () => {
  it('sets the command before the full stop, on the node shown', () => {
    expect(reasonWithRemedy('pin every reference.', { action: 'pin', node: 'NODE', ref: 'app:1' }, 'edge-1')).toBe('pin every reference (holdfast pin edge-1 app:1).');
  });
  it('quotes a hostile reference and leaves a reason without a remedy alone', () => {
    expect(reasonWithRemedy('x', { action: 'pin', node: 'NODE', ref: 'a;b' }, 'n')).toBe("x (holdfast pin n 'a;b')");
    expect(reasonWithRemedy('durable pin', undefined, 'n')).toBe('durable pin');
  });
});
