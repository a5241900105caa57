// A remedy as the terminal says it: core and the shared rules hand data (shared/remedy), never a
// command line; this words it as the command that helps here. Every value goes through
// shared/shellQuote, so nothing a node supplies can become shell syntax.
import { distroDisplayName } from '../shared/distro';
import type { ErrorInfo } from '../shared/domain/errors';
import { inParens, proseText, remedyOnNode, type Prose, type Remedy, type RemedyOf } from '../shared/remedy';
import { commandLine } from './commandLine';

/**
 * A verdict's reason completed by the remedy it asks for, as the terminal says it: "… pin every
 * reference (holdfast pin node app:1)." A remedy's NODE placeholder becomes `node`.
 */
export function reasonWithRemedy(reason: string, remedy: Remedy | undefined, node: string): string {
  return withCommand(reason, remedy && remedyCommand(remedyOnNode(remedy, node)));
}

/** `reason` with `command` in parentheses before its full stop; `reason` alone without one. */
export function withCommand(reason: string, command: string | undefined): string {
  if (!command) return reason;
  const stop = reason.endsWith('.') ? '.' : '';
  return `${reason.slice(0, reason.length - stop.length)} (${command})${stop}`;
}

/** The arguments (after `holdfast`) of the command that carries out `r`. */
function remedyArgs(r: Exclude<Remedy, RemedyOf<'run-as-root'>>): string[] {
  switch (r.action) {
    case 'pin':
      return ['pin', r.node, ...(r.ref !== undefined ? [r.ref] : []), ...(r.archive !== undefined ? ['--archive', r.archive] : []), ...(r.needed ? ['--needed'] : []), ...(r.allK3s ? ['--all-k3s'] : [])];
    case 'unpin':
      return ['unpin', r.node, r.ref];
    case 'import':
      return ['import', r.node, r.archive, ...(r.pin ? ['--pin'] : [])];
    case 'prune':
      return ['prune', r.node, '--dry-run'];
    case 'remove-archive':
      return ['rm-archive', r.node, r.archive];
    case 'node-list':
      return ['node', 'ls'];
    case 'node-add':
      return ['node', 'add', ...(r.node !== undefined && r.host !== undefined ? [r.node, '--host', r.host] : [])];
    case 'node-edit':
      return ['node', 'edit', r.node, ...(r.group !== undefined ? ['--group', r.group] : [])];
    case 'archives':
      return ['archives', r.node];
    case 'images':
      return ['images', r.node];
    case 'trust-host-key':
      return ['node', 'edit', r.node, `--accept-new-host-key=${r.fingerprint}`];
    case 'sudo':
      return ['node', 'edit', r.node, '--sudo'];
    case 'k3s-start-or-direct':
      return ['import', r.node, 'FILE', '--direct'];
  }
}

/** The command line a person copies to carry out `r`, each value quoted as a shell word. */
export function remedyCommand(r: Remedy): string {
  // "…": whatever command failed, run again on the node itself.
  if (r.action === 'run-as-root') return 'sudo holdfast … --local';
  return commandLine(remedyArgs(r));
}

/** Where the terminal looks at a node's images, as a sentence ends with it (shared/rke2Lists `where`). */
export const imagesWhere = (node: string): string => `with \`${remedyCommand({ action: 'images', node })}\``;

/** Prose as the terminal says it: a remedy completing it in parentheses, as its command (shared/remedy Prose). */
export function cliProse(p: Prose): string {
  return proseText(p, inParens(remedyCommand));
}

/** An error's remedy as the sentence of its hint; `hint` (core's plain words) where the remedy needs no words of its own. */
export function remedyHint(r: Remedy, hint?: string): string | undefined {
  const cmd = remedyCommand(r);
  switch (r.action) {
    case 'node-list':
      if (r.purpose === 'add') return `List nodes with \`${cmd}\`; add one with \`${remedyCommand({ action: 'node-add' })}\`.`;
      if (r.purpose === 'edit-again') return `Look at it with \`${cmd}\`, then run the edit again.`;
      if (r.purpose === 'fix-jump') return `Fix the jump setting of one of these nodes (${cmd} shows them).`;
      return `List nodes with \`${cmd}\`.`;
    case 'node-add':
      return r.jumpOf !== undefined ? `Add ${r.node ?? 'it'} with \`${cmd}\`, or change ${r.jumpOf}'s jump host.` : `Add one with \`${cmd}\`.`;
    case 'node-edit':
      return r.group !== undefined ? `No node has a group yet: set one with \`${cmd}\`.` : hint;
    case 'archives':
      if (r.inside !== undefined) return `Give a path inside ${r.inside}, absolute or relative to it (as \`${cmd}\` lists them).`;
      return r.missing !== undefined ? `List the images dir with \`${cmd}\`.` : `List archives with \`${cmd}\`.`;
    case 'sudo':
      return r.toRead
        ? `Reach the images dir through sudo (the node's sudo option: ${cmd}; the user needs password-less sudo), or connect as a user who may read it, such as root.`
        : hint;
    case 'run-as-root':
      return `Run Holdfast as root on the node (${cmd}).`;
    default:
      return hint;
  }
}

/**
 * What to do instead of running the import again. `file`: the local archive the command was
 * given. Every argument is quoted as a shell word (shared/shellQuote).
 */
export function remedyText(r: RemedyOf<'k3s-start-or-direct'>, file: string): string {
  const who = distroDisplayName(r.distro);
  // After --direct the archive must go, or the next start makes the pins k3s-managed again.
  return `restart ${who} on ${r.node}, whose start imports ${r.archive}, then run this import again; or, without ${who}: ${commandLine(['import', r.node, file, '--direct'])}, then ${remedyCommand({ action: 'remove-archive', node: r.node, archive: r.archive })}`;
}

/** An error's hint as the terminal says it: its remedy worded where it has one, else core's words. */
export function errorHint(info: Pick<ErrorInfo, 'hint' | 'remedy'>): string | undefined {
  return info.remedy ? remedyHint(info.remedy, info.hint) : info.hint;
}
