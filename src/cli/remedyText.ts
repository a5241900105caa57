// An error's remedy as the terminal says it: core hands data (shared/domain ErrorRemedy), never a
// command line; the CLI words it with the command that helps here.
import { HoldfastError } from '../core/errors';
import { shellQuoteArg } from '../core/ssh/quote';
import { distroDisplayName } from '../shared/distro';
import type { ErrorRemedy } from '../shared/domain';

/**
 * What to do instead of running the import again. `file`: the local archive the command was
 * given. Node names are safe words (the contract's rule), the path is quoted.
 */
export function remedyText(r: ErrorRemedy, file: string): string {
  const who = distroDisplayName(r.distro);
  // After --direct the archive must go, or the next start makes the pins k3s-managed again.
  return `restart ${who} on ${r.node}, whose start imports ${r.archive}, then run this import again; or, without ${who}: holdfast import ${r.node} ${shellQuoteArg(file)} --direct, then holdfast rm-archive ${r.node} ${shellQuoteArg(r.archive)}`;
}

/** The error with its remedy worded as its hint (an error without one as it is). */
export function withRemedyHint(e: HoldfastError, file: string): HoldfastError {
  if (!e.remedy) return e;
  return new HoldfastError(e.code, e.message, { hint: remedyText(e.remedy, file), remedy: e.remedy });
}
