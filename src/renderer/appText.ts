// A remedy as the app says it (shared/remedy): what to press, never a command line. Core's
// sentences carry their remedy as data (Prose: "make its pins durable first" and the remedy);
// the terminal words it as a command, the app as the button that carries it out.
import { proseText, type Prose, type Remedy } from '../shared/remedy';

/** `p` for the app: a remedy completing it becomes `click` (e.g. "use Make durable on this row"). */
export function appText(p: Prose, click: string): string {
  return proseText(p, () => ` — ${click}`);
}

/** `p` where the app's own controls carry its remedies (a row's buttons): the prose alone, each sentence ended. */
export function appProse(p: Prose): string {
  return proseText(p, (_r, c) => (c?.colon ? '.' : ''));
}

/** A remedy in a sentence the app shows whole: the button that carries it out, where it is. */
export function appRemedy(r: Remedy): string {
  if (r.action === 'pin') return r.needed ? 'Make durable on the Images tab' : 'Make durable on its row';
  return 'see the node in Holdfast';
}
