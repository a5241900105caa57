import { describe, expect, it } from 'vitest';
import { selectNodes } from '../../../src/shared/nodeSelection';
import { selectNodes as cliSelect } from '../../../src/cli/nodeSelection';
import type { NodeDef } from '../../../src/shared/domain/nodes';

const def = (name: string, group?: string) => ({ name, ...(group ? { group } : {}) }) as NodeDef;
const all = [def('a', 'north'), def('b', 'south'), def('c', 'north')];
const cli = (nodes: NodeDef[]) => ({ store: () => ({ list: async () => nodes }) }) as never;

describe('node selection: one rule and one message for the CLI and the service (issue #14)', () => {
  it('names (in the order given, once), a group, both (narrowed) or every node', () => {
    expect(selectNodes(all, { names: ['c', 'a', 'c'] })).toEqual({ nodes: [all[2], all[0]] });
    expect(selectNodes(all, { group: 'north' })).toEqual({ nodes: [all[0], all[2]] });
    expect(selectNodes(all, { names: ['a', 'b'], group: 'south' })).toEqual({ nodes: [all[1]] });
    expect(selectNodes(all, {})).toEqual({ nodes: all });
  });

  it('the problems, with the groups there are', () => {
    expect(selectNodes(all, { group: 'nowhere' })).toEqual({ problem: { code: 'NOT_FOUND', message: 'no node in group "nowhere"', hint: 'Groups: north, south.' } });
    expect(selectNodes([def('x')], { group: 'g' })).toMatchObject({ problem: { hint: expect.stringMatching(/No node has a group yet/) } });
    expect(selectNodes(all, { names: ['zz'] })).toMatchObject({ problem: { message: 'no node named "zz"' } });
    expect(selectNodes([], {})).toMatchObject({ problem: { message: 'no nodes yet' } });
  });

  it('the CLI says what the shared rule says', async () => {
    await expect(cliSelect(cli(all), [], { group: 'nowhere' })).rejects.toMatchObject({ code: 'NOT_FOUND', message: 'no node in group "nowhere"' });
    await expect(cliSelect(cli(all), ['b', 'a'], {})).resolves.toEqual([all[1], all[0]]);
    await expect(cliSelect(cli(all), ['a'], { group: 'north' })).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  });
});
