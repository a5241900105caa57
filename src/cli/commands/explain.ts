// holdfast explain NODE REF — everything Holdfast knows about one reference on one node, every
// reason in full: the long form behind the short clauses `images`, `archives`, `inspect` and
// `prune` print on a terminal. The facts and the advice are shared/explain's.
import type { Command } from 'commander';
import { HoldfastError } from '../../core/errors';
import { distroDisplayName } from '../../shared/distro';
import type { ImageRef } from '../../shared/domain/images';
import { DISTRO_PIN_LABELS, LABEL_CRI_PINNED, PROVENANCE } from '../../shared/domain/labels';
import { explainReference, type ExplainedRef, type ReferenceExplanation } from '../../shared/explain';
import { lostPinInWords, lostPinKindText, pinnedByText } from '../../shared/lostPins';
import { pinStateText } from '../pinText';
import { workloadName, type NeedsReport } from '../../shared/needs';
import { findReference, isImageIdRecord } from '../../shared/imageReference';
import { criPinning } from '../../shared/versions';
import { connectsFirstNode, type Cli } from '../context';
import { JSON_HELP, printedAsJson } from '../output';
import { wrapWords } from '../fit';
import { humanSize, terminalSafe as safe } from '../format';
import { helpAfter } from '../help';
import type { Screen } from '../screen';
import { commandLine } from '../commandLine';
import { REMOVAL_TONE_TEXT } from '../../shared/removalVerdict';
import { archivesInWords } from '../../shared/archivesReport';
import { inParens, type Remedy } from '../../shared/remedy';
import { cliProse, remedyCommand, withCommand } from '../remedyText';
import { signatureSentence } from '../../shared/signatures';

/** The labels that say how a reference is pinned (and who pinned it durably). */
const PIN_LABELS = [LABEL_CRI_PINNED, ...DISTRO_PIN_LABELS, PROVENANCE.at, PROVENANCE.by];

/**
 * The one name on the node `query` stands for (shared/imageReference findReference, as pin and unpin
 * resolve it). A needed image the node lacks counts by its name too.
 */
export function resolveReference(query: string, images: readonly Pick<ImageRef, 'name' | 'imageId'>[], needs: Pick<NeedsReport, 'missing'>, node: string): string {
  const hit = findReference(query, images, node, needs.missing.map((m) => m.ref));
  if (hit.found !== null) return hit.found;
  if (hit.ambiguous !== null) throw new HoldfastError('INVALID_INPUT', hit.ambiguous, { hint: 'Give more of the name (holdfast images --wide lists them whole).' });
  throw new HoldfastError('NOT_FOUND', `no reference "${query}" on ${node}, and the site needs none by that name`, {
    hint: `${commandLine(['images', node])} lists every reference (a name, a name shortened with …, or an IMAGE ID works).`,
  });
}

/** Where the values start, after the labels. */
const COL = 15;

/** Label, then value lines under one column; on a terminal each value wrapped under it. */
class Fields {
  private readonly lines: string[] = [];

  constructor(private readonly screen: Screen) {}

  /** A field; `values` after the first go under it (each its own line). */
  add(label: string, ...values: string[]): this {
    values.forEach((v, n) => this.push(n === 0 ? label : '', v));
    return this;
  }

  /** A command to copy: whole, never wrapped. */
  command(line: string, indent = 0): this {
    this.lines.push(this.screen.command(`${' '.repeat(COL + indent)}${line}`));
    return this;
  }

  blank(): this {
    this.lines.push('');
    return this;
  }

  line(s: string): this {
    this.lines.push(this.screen.text(s));
    return this;
  }

  text(): string {
    return this.lines.join('\n');
  }

  private push(label: string, value: string): void {
    const lead = ' '.repeat(value.length - value.trimStart().length);
    const body = safe(value.trimStart());
    const width = this.screen.width;
    const pad = label.padEnd(COL - 1) + ' ';
    const rows = width === null ? [body] : wrapWords(body, Math.max(20, width - COL - lead.length));
    rows.forEach((r, n) => this.lines.push(`${n === 0 ? pad : ' '.repeat(COL)}${lead}${r}`.trimEnd()));
  }
}

const yes = (b: boolean, y: string, n: string) => (b ? y : n);

/** explain as the CLI gives it (JSON and text): every remedy worded as its command, in `command` (cli/remedyText). */
export type WordedExplanation = Omit<ReferenceExplanation, 'archives' | 'advice' | 'image'> & {
  image: (Omit<NonNullable<ReferenceExplanation['image']>, 'refs'> & { refs: (Omit<ExplainedRef, 'remedy'> & { command?: string })[] }) | null;
  archives: (Omit<ReferenceExplanation['archives'][number], 'remedy'> & { command?: string })[];
  advice: { text: string; command?: string }[];
};

export function explainInWords(e: ReferenceExplanation): WordedExplanation {
  const command = (remedy: Remedy | undefined) => (remedy ? { command: remedyCommand(remedy) } : {});
  const { image, ...rest } = e;
  return {
    ...rest,
    image: image ? { ...image, refs: image.refs.map(({ remedy, ...r }) => ({ ...r, ...command(remedy) })) } : null,
    archives: e.archives.map(({ remedy, ...a }) => ({ ...a, ...command(remedy) })),
    lostPins: e.lostPins.map((l) => lostPinInWords(l, remedyCommand)),
    advice: e.advice.map(({ remedy, text, ...a }) => ({ ...a, text: cliProse(text), ...command(remedy) })),
  };
}

/** The explanation as people read it: every fact on its line, every reason whole (`who`: the node's distro, shared/distro distroDisplayName). */
export function explainText(explained: ReferenceExplanation, screen: Screen, who = 'k3s'): string {
  const e = explainInWords(explained);
  const f = new Fields(screen);
  f.line(`${e.ref} on ${e.node}`).blank();
  const img = e.image;
  if (!img) {
    f.add('On the node', 'no: the node does not have it');
  } else {
    const self = img.refs[0]!;
    f.add('Image', img.imageId ? screen.ref(img.imageId, COL) : `unknown id (target ${screen.ref(img.key, COL + 20)})`, `${humanSize(img.size)}, ${img.platforms.join(', ') || 'no platform known'}`);
    if (isImageIdRecord(e.ref)) f.add('', `This is CRI's own record of the image (sha256:<id>): ${who} never labels it, and kubelet sees only the image.`);
    f.add('Signature', signatureSentence(img.signature));
    const labels = PIN_LABELS.filter((k) => img.labels[k] !== undefined).map((k) => `${k}=${img.labels[k]}`);
    f.add(
      'Pin now',
      img.shown.inherited ? `${pinStateText(img.shown.pin, who)} (its image's: this record carries no pin label of its own)` : pinStateText(img.shown.pin, who),
      labels.length ? `labels: ${labels.join(', ')}` : 'no pin labels',
      yes(img.protection.now, 'kubelet sees the image as pinned now', 'kubelet does not see the image as pinned now: its GC may delete it when no container uses it'),
    );
    f.blank().add(
      'After restart',
      `the image: ${img.protection.losesPin ? 'LOSES ITS PIN' : yes(img.protection.afterRestart, 'stays pinned', 'not pinned')} — ${img.protection.reason}`,
      `this reference: ${self.afterRestart} — ${withCommand(self.reason, self.command)}`,
    );
    if (img.refs.length > 1) {
      // Names on a terminal elided to fit (--wide: whole); each with its pin and its fate in a clause.
      const name = (r: string) => screen.ref(r, COL + 20);
      f.blank().add(
        'References',
        ...img.refs
          .slice(1)
          .map((r) => (r.inherited ? `${name(r.name)}: ${pinStateText(r.pin, who)} — CRI's own record: it shares its image's pin and fate` : `${name(r.name)}: ${pinStateText(r.pin, who)}, ${r.afterRestart} after the next ${who} start — ${r.brief}`)),
      );
    }
  }
  f.blank().add('Site need', `${e.need.atRisk ? e.need.text.toUpperCase() : e.need.text} — ${e.need.because}`);
  if (e.need.workloads.length) f.add('', 'needed by:', ...e.need.workloads.map((w) => `  ${workloadName(w)}${w.why ? ` (${w.why})` : ''}`));
  f.add('', e.needsFrom.noSource !== undefined ? `no source of site needs (${e.needsFrom.noSource}): an image from an air-gap archive counts as needed` : `needs read from: ${e.needsFrom.sources.join(', ') || 'nothing'}`);
  if (e.heldBy.length) f.add('', `copies: ${e.heldBy.join(', ')}`);
  f.blank();
  if (e.archives.length === 0) f.add('Archives', e.present ? 'no file in the images dir brings it: nothing brings it back once it is gone' : 'no file in the images dir holds it');
  for (const [n, a] of e.archives.entries()) {
    // In the removal verdict's words (shared/removalVerdict): never "safe" beside a warning.
    f.add(n === 0 ? 'Archives' : '', `${screen.ref(a.path, COL + 20)}: ${REMOVAL_TONE_TEXT[a.removalTone]} — ${a.reason}`);
  }
  if (e.lostPins.length) {
    f.blank();
    for (const [n, l] of e.lostPins.entries()) f.add(n === 0 ? 'Lost pins' : '', `${l.ref}: ${lostPinKindText(l.kind, who)} (${pinnedByText(l)})`, `  ${l.summary}`, ...l.causes.map((c) => `  likely: ${c}`));
  }
  f.blank();
  for (const [n, a] of e.advice.entries()) {
    f.add(n === 0 ? 'What to do' : '', `${e.advice.length > 1 ? `${n + 1}. ` : ''}${a.text}`);
    if (a.command) f.command(a.command, e.advice.length > 1 ? 3 : 0);
  }
  return f.text();
}

export function registerExplainCommand(program: Command, cli: Cli): void {
  program
    .command('explain')
    .summary('one reference on a node, every reason in full')
    .description(
      'Everything Holdfast knows about one image reference on a node, every reason in full: its pin and its image\'s, its fate at the next k3s start, what the site needs of it and who does, the archives that bring it, and what to do.',
    )
    .argument('<node>', 'the node that has the reference (or needs it)')
    .argument('<ref>', 'the reference, a short name or an image id')
    .hook('preAction', connectsFirstNode(cli))
    .option('--json', JSON_HELP)
    .addHelpText(
      'after',
      helpAfter(
        [
          'holdfast explain lab1-n1 docker.io/library/nginx:1.27',
          'holdfast explain lab1-n1 nginx:1.27',
          '# As a fitted table shows it: shortened, or by its IMAGE ID',
          "holdfast explain lab1-n1 'docker.io/library/holdfast-sa...:1.0'",
          'holdfast explain lab1-n1 3f2a9c1d8e7b',
          "holdfast explain lab1-n1 nginx:1.27 --json | jq '.advice'",
        ],
        [
          'REF is a reference as `holdfast images NODE` lists it; a Docker-style short name (nginx:1.27 is docker.io/library/nginx:1.27); a name shortened with ... (or the ellipsis a fitted table shows), its pieces in order; or an image id or its first digits. A needed image the node lacks counts by its name too.',
        ],
      ),
    )
    .action(async (name: string, query: string) => {
      const [{ images, lost, info, needs }, listed] = await Promise.all([cli.call('images.report', { node: name }), cli.call('archives.list', { node: name })]);
      // Every archive's reason in words: a remedy in one is its command (cli/remedyText).
      const archives = archivesInWords(listed, inParens(remedyCommand));
      const ref = resolveReference(query, images, needs, name);
      const who = distroDisplayName(info.distro);
      const e = explainReference({ node: name, ref, images, needs, lost, archives, mode: criPinning(info.containerdVersion), who })!;
      if (printedAsJson(cli, explainInWords(e))) return;
      cli.io.out(explainText(e, cli.screen(), who));
    });
}
