import { describe, expect, it } from 'vitest';
import { hostPatternListMatches, hostPatternMatches, wildcardMatch } from '../../../src/shared/hostPatterns';
import { hostMatches } from '../../../src/core/config/sshConfig';
import { hostFieldMatches } from '../../../src/core/ssh/knownHosts';

describe('one OpenSSH host-pattern matcher for ssh_config and known_hosts (issue #14)', () => {
  const cases: [string[], string, boolean][] = [
    [['edge-*'], 'EDGE-1', true],
    [['Edge-?.LAB'], 'edge-1.lab', true],
    [['*.internal', '!nope.internal'], 'x.internal', true],
    [['*.internal', '!NOPE.internal'], 'nope.Internal', false],
    [['!nope'], 'other', false],
    [['a.b'], 'axb', false],
    [['[10.0.0.*]:2222'], '[10.0.0.7]:2222', true],
    [['', '*'], 'x', true],
  ];
  it.each(cases)('%j vs %s -> %s, the same in both files', (patterns, host, ok) => {
    expect(hostPatternListMatches(patterns, host)).toBe(ok);
    expect(hostMatches(patterns, host)).toBe(ok);
    expect(hostFieldMatches(patterns.join(','), host)).toBe(ok);
  });

  it('the pieces', () => {
    expect(hostPatternMatches('A*', 'abc')).toBe(true);
    expect(wildcardMatch('A*', 'abc')).toBe(false); // file names (Include) keep their case
    expect(wildcardMatch('*.conf', 'x.conf')).toBe(true);
    expect(wildcardMatch('a*b*c', 'aXbYbZ')).toBe(false);
  });
});
