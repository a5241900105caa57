// The lost pins of a node as text: `holdfast images` lists one node's, `holdfast inspect` every node's.
import type { LostPin } from '../shared/domain/lostPins';
import { lostPinInWords, lostPinKindText, pinnedByText } from '../shared/lostPins';
import { proseText } from '../shared/remedy';
import { remedyCommand } from './remedyText';
import { plural } from '../shared/wording';
import { imageName } from '../shared/imageReference';
import { terminalSafe as safe } from './format';
import { Screen } from './screen';

/**
 * The lost pins of one node as text: which pin, when Holdfast made it, why it is likely gone, what
 * to do. On a terminal (`screen`), one entry per image (its references' pins went together) with
 * what to do, fitted to it; what the loss means and its likely causes only with `why`. `who`: the
 * node's distro as the text names it (shared/distro distroDisplayName).
 */
export function lostPinsText(given: readonly LostPin[], indent = '  ', screen: Screen = Screen.plain, why = true, who = 'k3s'): string {
  const out: string[] = [];
  const lost = given.map((l) => lostPinInWords(l, remedyCommand));
  if (!screen.terminal) {
    for (const l of lost) {
      // Names, paths and causes come from the node: each shown on its own line, harmless.
      out.push(`${indent}${safe(l.ref)} — ${lostPinKindText(l.kind, who)} (${safe(pinnedByText(l))})`);
      out.push(`${indent}  ${safe(l.summary)}`);
      out.push(`${indent}  likely: ${l.causes.map((c) => safe(c)).join(`\n${indent}          `)}`);
      out.push(`${indent}  remedy: ${safe(proseText(l.remedy.text))}${l.remedy.command ? `\n${indent}          ${safe(l.remedy.command)}` : ''}`);
    }
    return out.join('\n');
  }
  const byImage = new Map<string, LostPin[]>();
  for (const l of lost) {
    const k = l.imageId ?? l.ref;
    byImage.set(k, [...(byImage.get(k) ?? []), l]);
  }
  for (const [key, group] of byImage) {
    // The image by the name a person knows it by; its entry's remedy names that reference too.
    const name = imageName(group.map((l) => l.ref), key);
    const l = group.find((x) => x.ref === name) ?? group[0]!;
    const others = group.length > 1 ? ` (+${plural(group.length - 1, 'reference')})` : '';
    const kind = ` — ${lostPinKindText(l.kind, who)}`;
    out.push(screen.text(`${indent}${screen.ref(l.ref, indent.length + others.length + kind.length)}${others}${kind} (${safe(pinnedByText(l))})`));
    if (why) {
      for (const x of group) {
        out.push(screen.text(`${indent}  ${safe(x.summary)}`));
        for (const c of x.causes) out.push(screen.text(`${indent}  - likely: ${safe(c)}`));
      }
    }
    out.push(screen.text(`${indent}  → ${safe(proseText(l.remedy.text))}`));
    if (l.remedy.command) out.push(screen.command(`${indent}    ${l.remedy.command}`));
  }
  return out.join('\n');
}
