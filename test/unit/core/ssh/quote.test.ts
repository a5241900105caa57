import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { shellQuote, shellQuoteArg } from '../../../../src/core/ssh/quote';

const HOSTILE = [
  'plain',
  'with space',
  '',
  "it's",
  "''",
  "'\\''",
  '"double"',
  '$(touch /tmp/holdfast-pwned)',
  '`id`',
  '${HOME}',
  '$HOME',
  'a;b',
  '; rm -rf /',
  'a && b || c',
  'line1\nline2',
  '\n',
  'tab\there',
  '*',
  '~',
  '~root',
  'FOO=bar',
  '-n',
  '\\',
  'back\\slash\\',
  '#comment',
  '!',
  '!!',
  '> /dev/null',
  '<(cat)',
  'ünïcødé ✓',
  '{a,b}',
  '[ab]',
];

/** Run the quoted command in real shells and return the argv they saw. */
function argvSeenBy(shell: string, argv: string[]): string[] {
  const out = execFileSync(shell, ['-c', `printf '%s\\0' ${shellQuote(argv)}`], { encoding: 'utf8' });
  return out.split('\0').slice(0, -1);
}

describe('shellQuote', () => {
  it('always single-quotes, escaping only the single quote', () => {
    expect(shellQuoteArg('abc')).toBe("'abc'");
    expect(shellQuoteArg('')).toBe("''");
    expect(shellQuoteArg("it's")).toBe("'it'\\''s'");
    expect(shellQuote(['ctr', '-n', 'k8s.io'])).toBe("'ctr' '-n' 'k8s.io'");
  });

  for (const shell of ['sh', 'bash', 'dash']) {
    it(`every hostile argument arrives literally in ${shell}`, () => {
      let available = true;
      try {
        execFileSync(shell, ['-c', 'true']);
      } catch {
        available = false;
      }
      if (!available) return;
      expect(argvSeenBy(shell, HOSTILE)).toEqual(HOSTILE);
      for (const a of HOSTILE) expect(argvSeenBy(shell, [a])).toEqual([a]);
    });
  }

  it('printf "%s\\n" shows the same lines sh received (the brief\'s check)', () => {
    const argv = ['a b', '$(id)', 'x;y', "q'q", ''];
    const out = execFileSync('sh', ['-c', `printf "%s\\n" ${shellQuote(argv)}`], { encoding: 'utf8' });
    expect(out).toBe(argv.map((a) => `${a}\n`).join(''));
  });

  it('refuses NUL bytes and an empty argv', () => {
    expect(() => shellQuote(['a\0b'])).toThrow(/NUL/);
    expect(() => shellQuote([])).toThrow(/at least one/);
  });
});
