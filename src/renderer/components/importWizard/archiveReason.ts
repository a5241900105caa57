// Why a chosen archive cannot be imported, for the one line it gets in the wizard's first step:
// one short clause there, the whole message and what to do on request. The core writes the
// reason for a person reading it alone ("broken.tar.gz was refused: truncated: the gzip stream
// ends …"); next to the file's own path, its name and the parenthesised detail are repeats.
import type { ErrorInfo } from '../../../shared/domain/errors';
import { basename } from '../../model/paths';

export interface ArchiveReason {
  /** One short clause: "truncated: the gzip stream ends before the end of the archive". */
  short: string;
  /** The whole message and the hint, as the core wrote them. */
  long: string;
}

const FALLBACK = 'the archive could not be read';

export function archiveReason(path: string, error: ErrorInfo | undefined): ArchiveReason {
  if (!error) return { short: FALLBACK, long: `${FALLBACK}.` };
  const long = error.hint ? `${error.message} ${error.hint}` : error.message;
  const name = basename(path);
  let s = error.message.trim();
  // The file's own name (or path) opens most messages: the line already shows it.
  for (const lead of [`${name} was refused: `, `${name}: `, `${name} `, `${path}: `, `${path} `]) {
    if (s.startsWith(lead)) {
      s = s.slice(lead.length);
      break;
    }
  }
  // "no such file: /the/same/path" says the path a second time.
  if (s.endsWith(`: ${path}`)) s = s.slice(0, -(path.length + 2));
  // A parenthesised detail (the suffix list, a digest) and a second sentence are the long form's.
  s = s.replace(/\s*\([^)]*\)/g, '');
  const cut = s.search(/[.;]\s|, so |, which /);
  if (cut > 0) s = s.slice(0, cut);
  s = s.replace(/\.$/, '').trim();
  return { short: s || FALLBACK, long };
}
