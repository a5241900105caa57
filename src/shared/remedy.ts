// What fixes something, as data: an action and what it acts on. Core and the shared rules hand
// it out and never word it; the CLI words it as a command line (src/cli/remedyText.ts, every
// value through shared/shellQuote), the app as a sentence or a button (src/renderer/appText.ts).
import type { Distro } from './domain/nodes';

/**
 * One remedy, by `action`. NODE, NAME, HOST or ARCHIVE stand for a value the reader supplies when
 * none is known.
 * - pin: make pins durable; `ref`: one reference's, `archive`: the images an archive brings, `needed`: what the site
 *   needs, `allK3s`: every image the distro pinned.
 * - unpin: release a durable pin. prune: see what prune would remove (a dry run).
 * - import: bring an archive's images back (`pin`: and pin them durably). remove-archive: remove an archive from the images dir.
 * - node-list: look at the configured nodes; `purpose`: what for (add one, edit again, fix a jump).
 * - node-add: add a node (`jumpOf`: the node whose jump host it is). node-edit: change a node (`group`: set its group).
 * - archives: list a node's images dir (`inside`: the dir, where a path must be given inside it;
 *   `missing`: a path it does not hold). images: look at a node's images. run-as-root: run Holdfast as root on the node (--local).
 * - trust-host-key, sudo: how to get into a node that refused Holdfast (ErrorInfo.access); sudo
 *   `toRead`: the user may not read the images dir.
 * - k3s-start-or-direct: the distro's watcher will not import `archive` again by itself.
 */
export type Remedy =
  | { action: 'pin'; node: string; ref?: string; archive?: string; needed?: true; allK3s?: true }
  | { action: 'unpin'; node: string; ref: string }
  | { action: 'import'; node: string; archive: string; pin?: true }
  | { action: 'prune'; node: string }
  | { action: 'remove-archive'; node: string; archive: string }
  | { action: 'node-list'; purpose?: 'add' | 'edit-again' | 'fix-jump' }
  | { action: 'node-add'; node?: string; host?: string; jumpOf?: string }
  | { action: 'node-edit'; node: string; group?: string }
  | { action: 'archives'; node: string; inside?: string; missing?: string }
  | { action: 'images'; node: string }
  | { action: 'run-as-root' }
  | { action: 'trust-host-key'; node: string; fingerprint: string }
  | { action: 'sudo'; node: string; toRead?: true }
  | { action: 'k3s-start-or-direct'; node: string; archive: string; distro: Distro };

export type RemedyAction = Remedy['action'];

/** The remedy of one action. */
export type RemedyOf<A extends RemedyAction> = Extract<Remedy, { action: A }>;

/** What lets Holdfast in when a node refuses it: trust the key with `fingerprint` of `node` (a jump host's, for a hop), or use the node's sudo option. */
export type AccessRemedy = RemedyOf<'trust-host-key' | 'sudo'>;

/** What makes an archive safe to remove, when pinning does: pin the images it brings. */
export type ArchiveRemedy = RemedyOf<'pin'> & { archive: string };

/** A remedy in words for one audience (a command line, a sentence); `c`: the clause it completes. */
export type RemedyWording = (r: Remedy, c?: RemedyClause) => string;

/**
 * A sentence a remedy completes, as data: the reader words `remedy` between `text` and `end`
 * (the CLI as " (holdfast pin …)", the app as what to press), so the sentence names no command.
 * `colon`: the terminal says it after a colon ("release its pin first: holdfast unpin …").
 */
export interface RemedyClause {
  text: string;
  remedy: Remedy;
  end: string;
  colon?: true;
}

/**
 * Prose that crosses to the CLI and the app: plain, completed by a remedy (RemedyClause), or a
 * sentence several remedies complete in turn (their clauses in order).
 */
export type Prose = string | RemedyClause | readonly RemedyClause[];

/** `p` in words: its remedies as `word` says them (without `word`, the prose alone). */
export function proseText(p: Prose, word?: RemedyWording): string {
  if (typeof p === 'string') return p;
  const clauses: readonly RemedyClause[] = 'text' in p ? [p] : p;
  return clauses.map((c) => `${c.text}${word ? word(c.remedy, c) : ''}${c.end}`).join('');
}

/** `word` set in parentheses after the clause it completes (after a colon where it says so): how the terminal and the reports say a command. */
export const inParens =
  (word: RemedyWording): RemedyWording =>
  (r, c) =>
    c?.colon ? `: ${word(r)}` : ` (${word(r)})`;

/** `r` on `node` where it names the NODE placeholder (a rule that did not know the node). */
export function remedyOnNode(r: Remedy, node: string): Remedy {
  return 'node' in r && r.node === 'NODE' ? ({ ...r, node } as Remedy) : r;
}
