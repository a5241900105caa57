// Strict POSIX shell quoting for commands sent over an SSH exec channel.
//
// The SSH server hands the command string to the remote user's login shell (`$SHELL -c`), so
// every argument is single-quoted, always, by the one rule in src/shared/shellQuote.ts. This
// adds what only a command that runs needs: arguments are strings, and none holds a NUL byte.
// Non-POSIX login shells (fish, csh) would need other rules: Holdfast assumes sh-compatible.
import { shellQuoteArg as quoteArg } from '../../shared/shellQuote';
import { HoldfastError } from '../errors';

/** Quote one argument for a POSIX shell. */
export function shellQuoteArg(arg: string): string {
  if (typeof arg !== 'string') {
    throw new HoldfastError('INVALID_INPUT', `Command arguments must be strings, got ${typeof arg}.`);
  }
  if (arg.includes('\0')) {
    // A NUL byte cannot be part of an argv entry; a shell would silently cut the word there.
    throw new HoldfastError('INVALID_INPUT', 'Command arguments cannot contain NUL bytes.');
  }
  return quoteArg(arg);
}

/** Join argv into one command line for a POSIX shell; each argument arrives literally. */
export function shellQuote(argv: readonly string[]): string {
  if (!Array.isArray(argv) || argv.length === 0) {
    throw new HoldfastError('INVALID_INPUT', 'A command needs at least one argument.');
  }
  return argv.map(shellQuoteArg).join(' ');
}
