// One machine configured twice (shared/sameMachine): entries whose sshd presents the same host
// key are one machine; the first of each stands for it in the totals.
import { describe, expect, it } from 'vitest';
import { repeatedMachines, sameMachines, sameMachineText } from '../../../src/shared/sameMachine';

const K1 = 'SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s';
const K2 = 'SHA256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU';
const K3 = 'SHA256:Ojz0hcfc+yBWQd+uA8XFq2bYuT9NyFbVKAcy1NXNANs';

describe('sameMachines', () => {
  it('two entries with the same host key are one machine, in the order given; unknown keys never match', () => {
    const got = sameMachines([
      { node: 'edge1', hostKeys: [K1] },
      { node: 'edge2', hostKeys: [K2] },
      { node: 'edge1-via-bastion', hostKeys: [K1] },
      { node: 'down1', hostKeys: [] },
      { node: 'down2', hostKeys: [] },
    ]);
    expect(got).toEqual([{ nodes: ['edge1', 'edge1-via-bastion'], hostKey: K1 }]);
    expect([...repeatedMachines(got)]).toEqual(['edge1-via-bastion']);
    expect(sameMachineText(got[0]!)).toBe(`edge1 and edge1-via-bastion are one machine (the same SSH host key ${K1})`);
  });

  it('several keys on record: one in common is enough, and a chain of shared keys is one machine', () => {
    const got = sameMachines([
      { node: 'a', hostKeys: [K1, K2] },
      { node: 'b', hostKeys: [K3] },
      { node: 'c', hostKeys: [K3, K2] },
    ]);
    expect(got).toEqual([{ nodes: ['a', 'b', 'c'], hostKey: K2 }]);
    expect(sameMachineText(got[0]!)).toBe(`a, b and c are one machine (the same SSH host key ${K2})`);
  });

  it('distinct machines: nothing to say', () => {
    expect(sameMachines([{ node: 'a', hostKeys: [K1] }, { node: 'b', hostKeys: [K2] }])).toEqual([]);
    expect(sameMachines([])).toEqual([]);
  });
});
