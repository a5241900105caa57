// Exit codes: 0 success, 1 failure, 2 usage error, 3 refused by a safety check.
import type { ErrorCode } from '../shared/domain/errors';

export const EXIT = { OK: 0, FAILURE: 1, USAGE: 2, REFUSED: 3 } as const;

export function exitCodeFor(code: ErrorCode): number {
  switch (code) {
    case 'REFUSED':
    case 'HOST_KEY_UNKNOWN':
    case 'HOST_KEY_CHANGED':
      return EXIT.REFUSED;
    case 'INVALID_INPUT':
      return EXIT.USAGE;
    default:
      return EXIT.FAILURE;
  }
}

/**
 * A command whose work never settled (a promise nobody resolves) would let the event loop empty
 * and Node exit with code 0, as if it had succeeded (issue #51: an upload cut at the wrong moment
 * exited 0, printed nothing and left nothing on the node). While `running()` says a command is
 * still under way, the loop emptying is a failure: one line saying so, then exit 1. Once per
 * process for the real one; `proc` and `exit` are for tests.
 */
export function failWhenUnsettled(
  running: () => boolean,
  err: (line: string) => void,
  exit: (code: number) => void = (c) => process.exit(c),
  proc: NodeJS.EventEmitter = process,
): void {
  proc.on('beforeExit', () => {
    if (!running()) return;
    err('holdfast: the command stopped without finishing: it was waiting for an answer that cannot come any more, so it did not succeed — run it again (--verbose shows its last steps)');
    exit(EXIT.FAILURE);
  });
}
