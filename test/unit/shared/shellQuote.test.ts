import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { shellLine, shellQuoteArg, shellWord } from '../../../src/shared/shellQuote';

// [argument, as shellWord writes it]
const TABLE: [string, string][] = [
  ['edge-01', 'edge-01'],
  ['docker.io/library/nginx:1.25', 'docker.io/library/nginx:1.25'],
  ['ghcr.io/a/b@sha256:0123abcd', 'ghcr.io/a/b@sha256:0123abcd'],
  ['k=v,w+x%y_z', 'k=v,w+x%y_z'],
  ['--archive', '--archive'],
  ['with space', "'with space'"],
  ["it's", "'it'\\''s'"],
  ['"double"', `'"double"'`],
  ['$HOME', "'$HOME'"],
  ['$(id)', "'$(id)'"],
  ['`id`', "'`id`'"],
  ['x;touch${IFS}pwned;.tar.gz', "'x;touch${IFS}pwned;.tar.gz'"],
  ['a&&b|c', "'a&&b|c'"],
  ['line1\nline2', "'line1\nline2'"],
  ['tab\there', "'tab\there'"],
  ['esc\u001b]0;title\u0007', "'esc\u001b]0;title\u0007'"],
  ['*', "'*'"],
  ['~root', "'~root'"],
  ['a(b).tar', "'a(b).tar'"],
  ['back\\slash', "'back\\slash'"],
  ['#c', "'#c'"],
  ['ünï', "'ünï'"],
  ['', "''"],
];

/** The argv a real POSIX shell sees for a command line. */
function argvSeenBySh(line: string): string[] {
  const out = execFileSync('sh', ['-c', `printf '%s\\0' ${line}`], { encoding: 'utf8' });
  return out.split('\0').slice(0, -1);
}

describe('shellWord', () => {
  it.each(TABLE)('writes %j as %j', (arg, want) => {
    expect(shellWord(arg)).toBe(want);
  });

  it('hands every argument of the table to sh literally', () => {
    const argv = TABLE.map(([arg]) => arg);
    expect(argvSeenBySh(shellLine(argv))).toEqual(argv);
  });
});

describe('shellQuoteArg', () => {
  it('always single-quotes, even a safe word', () => {
    expect(shellQuoteArg('abc')).toBe("'abc'");
    expect(shellQuoteArg('FOO=bar')).toBe("'FOO=bar'");
    expect(shellQuoteArg('')).toBe("''");
    expect(shellQuoteArg("it's")).toBe("'it'\\''s'");
  });
});
