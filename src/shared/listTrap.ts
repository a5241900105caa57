// The .txt sibling-tag trap (docs/k3s-facts.md, start-up step 3): for an image a pre-pull list
// names that is already present, k3s pins EVERY tag CRI reports for that image id (RepoTags)
// with both labels — so a durable tag that only shares the image id with a listed name becomes
// k3s-managed at the next start, and once the list is gone the start after strips it. shared/fate
// finds it (it resolves lists as k3s does); these are its words, for every view.
import type { RemedyOf } from './remedy';

/** A durable reference a .txt list hands to k3s through another tag of its image. */
export interface ListTrap {
  /** The list, relative to the images dir. */
  list: string;
  /** The name in the list that resolves to the same image. */
  listed: string;
}

/** The long form: what happens, then what to do. */
export function listTrapReason(ref: string, t: ListTrap, who = 'k3s'): string {
  return (
    `Still pinned, but ${t.list} names ${t.listed}, another tag of the same image, and ${who} pins every tag of an image a .txt list names at each start: ` +
    `this durable pin becomes ${who}-managed, and once ${t.list} is gone, the start after that strips it. ` +
    `To keep ${ref} durable, remove ${t.list} from the images dir before ${who} restarts; if the list must stay, the pin stays ${who}-managed, so whoever removes the list later must make it durable again before the next start.`
  );
}

/** What keeps `ref` durable once the list is gone: pin it again (the reason's last step). */
export const listTrapRemedy = (ref: string): RemedyOf<'pin'> => ({ action: 'pin', node: 'NODE', ref });

/** One short clause beside a reference. */
export function listTrapBrief(t: ListTrap): string {
  return `${t.list} names ${t.listed} (same image)`;
}

/** The heading of the references a node's lists take over. */
export function listTrapHeading(n: number, who = 'k3s'): string {
  return `${n === 1 ? '1 durable pin' : `${n} durable pins`} ${who} takes over at its next start (a .txt list names another tag of ${n === 1 ? 'its image' : 'their images'}):`;
}

/** What a .txt list takes over, as the archives command and the Archives tab say it beside the list. */
export function listTakeoverBrief(takes: readonly { ref: string; listed: string }[]): string {
  const listed = [...new Set(takes.map((t) => t.listed))];
  return `takes over the durable pin of ${takes.map((t) => t.ref).join(', ')} (same image as ${listed.join(', ')})`;
}

/** The long form for the list. */
export function listTakeoverReason(list: string, takes: readonly { ref: string; listed: string }[], who = 'k3s'): string {
  return (
    `${who} pins every tag of an image ${list} names at each start, so ${takes.map((t) => `${t.ref} (same image as ${t.listed})`).join(', ')} ` +
    `${takes.length === 1 ? 'becomes' : 'become'} ${who}-managed, and once ${list} is gone the start after that strips ${takes.length === 1 ? 'its pin' : 'their pins'}. ` +
    `Remove ${list} before the next ${who} start to keep ${takes.length === 1 ? 'that pin' : 'those pins'} durable.`
  );
}

/**
 * Before pins are made durable: a .txt list that re-pins the image at every start hands them
 * back to k3s at its next start (every tag of the image, named in the list or not).
 */
export function listRepinsWarning(list: string, refs: readonly string[], who = 'k3s'): string {
  const shown = refs.slice(0, 3).join(', ') + (refs.length > 3 ? ` and ${refs.length - 3} more` : '');
  const one = refs.length === 1;
  return `${list} in the images dir pins ${shown} again at every ${who} start (${who} pins every tag of an image a .txt list names), so ${one ? 'it becomes' : 'they become'} ${who}-managed again at the next start: remove ${list} first to keep ${one ? 'the pin' : 'the pins'} durable.`;
}
