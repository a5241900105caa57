// Exit codes: 0 success, 1 failure, 2 usage error, 3 refused by a safety check.
import type { ErrorCode } from '../shared/domain';

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
