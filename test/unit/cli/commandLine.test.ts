// The Holdfast command a person copies (cli/commandLine): every argument quoted as a shell word.
import { describe, expect, it } from 'vitest';
import { commandLine } from '../../../src/cli/commandLine';

describe('commandLine', () => {
  it('quotes every argument of a holdfast command and leaves placeholders bare', () => {
    expect(commandLine(['pin', 'edge 01', '--archive', 'x;touch${IFS}pwned;.tar.gz'])).toBe(
      "holdfast pin 'edge 01' --archive 'x;touch${IFS}pwned;.tar.gz'",
    );
    expect(commandLine(['import', 'edge-01', 'ARCHIVE', '--pin'])).toBe('holdfast import edge-01 ARCHIVE --pin');
  });
});
