// An error's remedy as the terminal says it: core hands data (shared/domain ErrorRemedy), never a
// command line; the CLI words it with the command that helps here.
import { HoldfastError } from '../core/errors';
import { distroDisplayName } from '../shared/distro';
import type { ErrorRemedy } from '../shared/domain/errors';
import { commandLine } from '../shared/shellQuote';

/**
 * What to do instead of running the import again. `file`: the local archive the command was
 * given. Every argument is quoted as a shell word (shared/shellQuote).
 */
export function remedyText(r: ErrorRemedy, file: string): string {
  const who = distroDisplayName(r.distro);
  // After --direct the archive must go, or the next start makes the pins k3s-managed again.
  return `restart ${who} on ${r.node}, whose start imports ${r.archive}, then run this import again; or, without ${who}: ${commandLine(['import', r.node, file, '--direct'])}, then ${commandLine(['rm-archive', r.node, r.archive])}`;
}

/** The error with its remedy worded as its hint (an error without one as it is). */
export function withRemedyHint(e: HoldfastError, file: string): HoldfastError {
  if (!e.remedy) return e;
  return new HoldfastError(e.code, e.message, { hint: remedyText(e.remedy, file), remedy: e.remedy });
}
