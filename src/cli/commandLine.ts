// The Holdfast command a person copies: the terminal's words only. Core and the shared rules hand
// out remedies as data (shared/remedy) and never build one (test/unit/shared/remedy.test.ts).
import { shellLine } from '../shared/shellQuote';

/**
 * A Holdfast command a person copies, e.g. commandLine(['pin', node, '--archive', path]).
 * Every argument is quoted (shared/shellQuote), so nothing a node supplies can become shell
 * syntax; placeholders such as NODE or ARCHIVE are safe words and stay bare.
 */
export function commandLine(args: readonly string[]): string {
  return shellLine(['holdfast', ...args]);
}
