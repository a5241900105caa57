// holdfast images — each image on a node, its pins and its fate at the next k3s start, what the
// site needs and the durable pins that are gone.
import type { Command } from 'commander';
import type { ResultOf } from '../../shared/contract';
import type { ImageRef } from '../../shared/domain/images';
import { pinStateText } from '../pinText';
import { distroDisplayName } from '../../shared/distro';
import { atRiskBrief, atRiskOf, NEED_VERDICT_TEXT, verificationRemedyText, type NeedsReport } from '../../shared/needs';
import { nodeWarnings } from '../../shared/nodeWarnings';
import { plural, word } from '../../shared/wording';
import { gcBound, gcBoundBrief, imageProtection, losingOf, pinCounts, protectionBrief, protectionKey, refReading, refsByImage, type ImageProtection, type RefOutcome } from '../../shared/protection';
import { listTrapBrief, listTrapHeading } from '../../shared/listTrap';
import { embeddedRegistryBrief, peersColumnApplies, type EmbeddedRegistryConfig } from '../../shared/embeddedRegistry';
import { imageName, isImageIdRecord } from '../../shared/imageReference';
import { signatureBrief } from '../../shared/signatures';
import { criPinning, type CriPinning } from '../../shared/versions';
import { commandLine } from '../commandLine';
import { connectsFirstNode, type Cli } from '../context';
import { JSON_HELP, printedAsJson } from '../output';
import { namedOrLocalNode, withLocalOptions, type LocalFlags } from '../localNode';
import type { ColumnFit } from '../fit';
import { humanSize, shortDigest, terminalSafe as safe } from '../format';
import { Screen, whyHint } from '../screen';
import { FITTED_NOTE, helpAfter } from '../help';
import { lostPinsText } from '../lostPins';
import { lostPinInWords } from '../../shared/lostPins';
import { reasonWithRemedy, remedyCommand } from '../remedyText';
import { imageRefInWords } from '../imageRefJson';
import { kubeNodeHint } from '../kubeNodeText';

const lostLine = (n: number) => `${plural(n, 'durable pin')} Holdfast made ${word(n, 'is')} gone`;

/**
 * What the site needs, as the images table's footer says it: where the needs come from (or why
 * there is no source), every needed image at risk with the workloads that need it, and the one
 * command that protects them (shared/needs). On a terminal each image at risk gets one short
 * clause (its whole reason with `why`). Returns whether a short clause stood for a reason.
 */
function printNeeds(cli: Cli, node: string, images: ImageRef[], needs: NeedsReport, screen: Screen = Screen.plain, why = false, who = 'k3s'): boolean {
  const out = (s: string) => cli.io.out(screen.text(s));
  const from = needs.sources.map((s) => s.label).join(', ');
  out(
    needs.basis === 'known'
      ? `Site needs from: ${safe(from)}`
      : `No source of site needs (${safe(needs.noSource ?? 'none read')}): images from air-gap archives count as needed.${from ? ` Also read: ${safe(from)}.` : ''}`,
  );
  for (const n of needs.notes) cli.io.err(`note: ${node}: ${safe(n)}`);
  if (needs.unmatched) out(kubeNodeHint(node, needs.unmatched));
  const atRisk = atRiskOf(images, needs);
  if (atRisk.length === 0) {
    out('No needed image is at risk: every pod the site needs can start here.');
    return false;
  }
  out(`${atRisk.length} needed image${atRisk.length === 1 ? '' : 's'} AT RISK (a pod that needs ${atRisk.length === 1 ? 'it' : 'them'} may fail to start):`);
  for (const a of atRisk) {
    const held = a.heldBy?.length ? ` (copy: ${a.heldBy.join(', ')})` : '';
    const ref = a.refs.find((r) => !r.startsWith('sha256:')) ?? a.refs[0]!;
    if (!screen.terminal) cli.io.out(`  ${safe(ref)}: ${safe(a.because)}${safe(held)}`);
    else out(`  - ${screen.ref(ref, 6)}: ${safe(why ? a.because : atRiskBrief(a, images, needs))}${safe(held)}`);
  }
  if (atRisk.some((a) => a.pinnable)) out(`Make every needed image durable with: ${commandLine(['pin', node, '--needed'])}`);
  else if (atRisk.some((a) => a.verdict === 'unprotected' || a.verdict === 'losing')) out("Their pins are durable, but kubelet does not see them on this containerd: keep their archives in the images dir.");
  if (needs.verification) out(safe(verificationRemedyText(needs.verification, who)));
  if (atRisk.some((a) => a.verdict === 'missing')) out(`Bring a missing image back with: ${commandLine(['import', node, 'ARCHIVE'])}`);
  return screen.terminal && !why;
}

/**
 * k3s's embedded registry: the node's state in one line, then (registry on) the references peers
 * cannot pull from this node with why — the whole reason through a pipe or with --why (the PEERS
 * column has the short clause on a terminal).
 */
function printPeers(cli: Cli, images: ImageRef[], cfg: EmbeddedRegistryConfig, screen: Screen, why: boolean): boolean {
  const out = (s: string) => cli.io.out(screen.text(s));
  out(safe(embeddedRegistryBrief(cfg)));
  const blocked = images.filter((i) => i.peers && !i.peers.servable);
  const servable = images.filter((i) => i.peers?.servable).length;
  out(`${plural(servable, 'reference')} peers can pull from this node; ${blocked.length} they cannot.`);
  if (screen.terminal && !why) return blocked.length > 0;
  for (const i of blocked) cli.io.out(`  ${safe(i.name)}: ${safe(i.peers!.reason)}`);
  return false;
}

/** How the images table gives way on a narrow terminal: the reference stays, PLATFORMS goes first. */
const IMAGE_COLUMNS: readonly ColumnFit[] = [
  { kind: 'ref', min: 36, want: 56 },
  { kind: 'text', min: 4 },
  { kind: 'text', min: 9, want: 13 },
  { kind: 'text', min: 11, want: 12, hide: 4 },
  { hide: 2, extra: true },
  { hide: 3, extra: true },
  { kind: 'text', min: 12, hide: 1, extra: true },
];

/** PEERS, shown while the node's embedded registry is on: it gives way after PLATFORMS. */
const PEERS_COLUMN: ColumnFit = { kind: 'text', min: 5, want: 14, hide: 1.5 };

/** SIGNED, shown when any image has a signature record (or with --wide): it gives way after PEERS. */
const SIGNED_COLUMN: ColumnFit = { kind: 'text', min: 6, want: 14, hide: 1.75 };

/** A reference's PEERS cell: yes, or why peers cannot pull it from this node (CRI's record: -). */
const peersCell = (i: ImageRef) => (!i.peers ? '-' : i.peers.servable ? 'yes' : i.peers.brief);

const OUTCOME: Record<RefOutcome, string> = { pinned: 'pinned', unpinned: 'unpinned', 'loses-pin': 'LOSES PIN', 'own-pin-goes': 'unpinned (image kept)' };

/** Marks a row that shows its image's pin (refReading): CRI's own sha256:<id> record. */
const INHERITED = '*';

/** The line under the table that says what INHERITED means. */
const INHERITED_NOTE = `${INHERITED} CRI's sha256:<id> record: no labels of its own, it shows its image's pin.`;

/** Tags first, then digest references, then CRI's own record: how a person reads an image's references. */
const refRank = (name: string) => (isImageIdRecord(name) ? 2 : name.includes('@') ? 1 : 0);


export function registerImagesCommand(program: Command, cli: Cli): void {
  withLocalOptions(
    program
      .command('images')
      .summary('each image on a node and its fate at k3s start')
      .description(
        'Every image reference on a node: its pin, what happens to it at the next k3s start, whether the site needs it, and the needed images at risk.',
      )
      .argument('[node]', 'the node to list (none with --local)')
      .hook('preAction', connectsFirstNode(cli))
      .option('--json', JSON_HELP)
      .option('--lost', 'only the durable pins Holdfast made that are gone')
      .option('--why', 'every reason in full, not one short clause')
  )
    .addHelpText(
      'after',
      helpAfter(
        [
          'holdfast images lab1-n1',
          'holdfast images lab1-n1 --lost',
          'holdfast images lab1-n1 --why --wide',
          '# On the node itself, as root: no SSH',
          'holdfast images --local',
          '# The references nothing pins',
          'holdfast images lab1-n1 --json | jq -r \'.[] | select(.pin == "none") | .name\'',
        ],
        [
          'PIN: durable (io.cri-containerd.pinned, which no k3s/RKE2 start touches), k3s or RKE2 (the distro\'s label: its next start removes it unless it imports the image again; --json says distro for both) or none.',
          '--json is an array of references (one whose pin is lost carries lostPin; peers: whether other nodes can pull it from this one through k3s\'s embedded registry, and why not); with --lost, an array of lost pins.',
          'PEERS (while the embedded registry is on): yes, or why peers cannot pull the reference from this node.',
          FITTED_NOTE,
        ],
      ),
    )
    .action((given: string | undefined, o: ImagesOptions) => listImages(cli, given, o));
}

/** The options of images, as commander parses them. */
interface ImagesOptions extends LocalFlags {
  lost?: boolean;
  why?: boolean;
}

/** What the printers share: the node's report, the screen, and whether every reason is given in full. */
interface ImagesView {
  cli: Cli;
  node: string;
  report: ResultOf<'images.report'>;
  screen: Screen;
  why: boolean;
  /** The node's distro, as the sentences name who pins and strips ("k3s", "RKE2"). */
  who: string;
}

/** A line for a person: wrapped to the terminal. */
const out = (v: ImagesView, s: string) => v.cli.io.out(v.screen.text(s));

// complete (the node: named, or this machine with --local) → run (images.report) → print (JSON,
// the lost pins with --lost, or the table and what the site needs).
async function listImages(cli: Cli, given: string | undefined, o: ImagesOptions): Promise<void> {
  const name = await namedOrLocalNode(cli, o, given);
  // --json stays an array of references (scripts parse it); a reference whose pin is lost carries `lostPin`.
  const report = await cli.call('images.report', { node: name });
  const { images, lost, info } = report;
  const v: ImagesView = { cli, node: name, report, screen: cli.screen(), why: o.why === true, who: distroDisplayName(info.distro) };
  if (o.lost) {
    if (printedAsJson(cli, lost.map((l) => lostPinInWords(l, remedyCommand)))) return;
    return cli.io.out(lost.length ? `${lostLine(lost.length)} on ${name}:\n${lostPinsText(lost, '  ', v.screen, v.why, v.who)}` : `no durable pin Holdfast made on ${name} is lost`);
  }
  if (printedAsJson(cli, images.map((r) => imageRefInWords(r, name)))) return;
  // What the node runs may make every pin moot: said once, before the table.
  for (const w of nodeWarnings(info)) cli.io.err(`warning: ${name}: ${safe(w.message)}`);
  if (images.length === 0) {
    const def = (await cli.call('nodes.list', {})).find((d) => d.name === name);
    return printNoImages(v, def?.namespace ?? 'k8s.io');
  }
  printImages(v);
}

function printNoImages(v: ImagesView, namespace: string): void {
  const { cli, node, report, screen, why, who } = v;
  cli.io.out(`no images in namespace ${namespace} on ${node}`);
  if (printNeeds(cli, node, report.images, report.needs, screen, why, who)) out(v, whyHint(node));
  if (report.lost.length) cli.io.out(`\n${lostLine(report.lost.length)}:\n${lostPinsText(report.lost, '  ', screen, why, who)}`);
}

/** The table, its footer, then what puts an image at risk: needs, lost pins, pins that hold on paper only. */
function printImages(v: ImagesView): void {
  const { cli, node, screen, why, who } = v;
  const { images, lost, needs, embeddedRegistry } = v.report;
  const peersOn = peersColumnApplies(embeddedRegistry);
  // What was verified at import (#48): a column only where there is something to say.
  const signedOn = v.cli.wide || images.some((i) => i.signature);
  // One verdict per image, as kubelet sees it (shared/protection); references are the detail.
  const mode = criPinning(v.report.info.containerdVersion);
  const byImage = refsByImage(images);
  const protection = imageProtection(images, mode, who);
  const inherited = printTable(v, byImage, protection, { peersOn, signedOn });
  if (inherited) out(v, INHERITED_NOTE);
  // The footer counts pins as the PIN column reads them, and as every other view counts them.
  const counts = pinCounts(images);
  cli.io.out(`\n${images.length} references of ${protection.size} images: ${counts.durable} durable, ${counts.distro} ${who}-pinned, ${counts.none} unpinned`);
  // Said only where the node takes part (on, or an agent following its servers): most nodes stay as they were.
  const peersShort = peersOn && printPeers(cli, images, embeddedRegistry!, screen, why);
  let short = printNeeds(cli, node, images, needs, screen, why, who) || peersShort;
  const losingShort = printLosing(v, byImage, protection, mode);
  const paperShort = printPaperPins(v);
  short = short || losingShort || paperShort;
  if (lost.length) {
    cli.io.out(`\n${lostLine(lost.length)}:\n${lostPinsText(lost, '  ', screen, why, who)}`);
    short ||= screen.terminal && !why;
  }
  if (short) out(v, whyHint(node));
}

/** The images table; returns whether a row shows its image's pin (INHERITED). */
function printTable(v: ImagesView, byImage: Map<string, ImageRef[]>, protection: Map<string, ImageProtection>, { peersOn, signedOn }: { peersOn: boolean; signedOn: boolean }): boolean {
  const { screen, who } = v;
  const images = v.report.images;
  // On a terminal each image's references are together (tags, digest references, CRI's record);
  // a pipe gets the node's order. CRI's record shows its image's pin on both (shared/protection pinReading).
  const rows = screen.terminal ? [...byImage.values()].flatMap((refs) => [...refs].sort((a, b) => refRank(a.name) - refRank(b.name))) : images;
  let inherited = false;
  v.cli.io.out(
    screen.table(
      ['REFERENCE', 'PIN', 'AFTER RESTART', 'SITE NEED', 'IMAGE ID', 'SIZE', 'PLATFORMS', ...(peersOn ? ['PEERS'] : []), ...(signedOn ? ['SIGNED'] : [])],
      rows.map((i) => {
        const p = protection.get(protectionKey(i))!;
        const shown = refReading(i, byImage.get(protectionKey(i))!, p);
        inherited ||= shown.inherited;
        return [
          i.name,
          // (fitted, PIN LOST goes on a line of its own, so the column stays narrow)
          screen.width !== null
            ? [`${pinStateText(shown.pin, who)}${shown.inherited ? INHERITED : ''}`, ...(i.lostPin ? ['PIN LOST'] : [])]
            : `${pinStateText(shown.pin, who)}${shown.inherited ? INHERITED : ''}${i.lostPin ? ' (PIN LOST)' : ''}`,
          OUTCOME[shown.outcome],
          i.need ? (i.need.atRisk ? NEED_VERDICT_TEXT[i.need.verdict].toUpperCase() : NEED_VERDICT_TEXT[i.need.verdict]) : '-',
          shortDigest(i.imageId),
          humanSize(i.size),
          screen.terminal ? i.platforms.join(', ') || '-' : i.platforms.join(',') || '-',
          ...(peersOn ? [peersCell(i)] : []),
          ...(signedOn ? [signatureBrief(i.signature)] : []),
        ];
      }),
      [...IMAGE_COLUMNS, ...(peersOn ? [PEERS_COLUMN] : []), ...(signedOn ? [SIGNED_COLUMN] : [])],
    ),
  );
  return inherited;
}

/** The images (not already said at risk) that lose their pin at the next start; returns whether a short clause stood for a reason. */
function printLosing(v: ImagesView, byImage: Map<string, ImageRef[]>, protection: Map<string, ImageProtection>, mode: CriPinning): boolean {
  const { cli, screen, why, who } = v;
  const images = v.report.images;
  const atRisk = losingOf(protection).filter((p) => !images.some((i) => i.need?.atRisk && protectionKey(i) === p.key));
  if (!atRisk.length) return false;
  let short = false;
  out(v, `${atRisk.length} image${atRisk.length === 1 ? '' : 's'} will lose ${atRisk.length === 1 ? 'its' : 'their'} pin at the next ${who} start (as kubelet sees ${atRisk.length === 1 ? 'it' : 'them'}):`);
  for (const p of atRisk) {
    if (!screen.terminal) cli.io.out(`  ${safe(p.refs.join(', '))}: ${safe(p.reason)}`);
    else {
      const refs = byImage.get(p.key)!;
      out(v, `  - ${screen.ref(imageName(p.refs, p.key), 6)}: ${safe(why ? p.reason : protectionBrief(p, refs, mode, who))}`);
      short ||= !why;
    }
  }
  out(v, `Make them durable with: ${commandLine(['pin', v.node, '--all-k3s'])}`);
  return short;
}

/**
 * Pins that hold on paper only: a .txt list hands them to the distro, or containerd's own GC
 * removes the reference. Returns whether a short clause stood for a reason.
 */
function printPaperPins(v: ImagesView): boolean {
  const images = v.report.images;
  const trapped = images.filter((r) => r.listTrap);
  const listShort = printNoted(v, trapped, listTrapHeading(trapped.length, v.who), (r) => listTrapBrief(r.listTrap!));
  const bound = images.filter((r) => gcBound(r.labels) && r.pin !== 'none');
  const boundShort = printNoted(
    v,
    bound,
    `${plural(bound.length, 'reference')} containerd may remove whatever ${bound.length === 1 ? 'its pin says' : 'their pins say'} (containerd.io/gc.bref / gc.expire labels):`,
    (r) => gcBoundBrief(gcBound(r.labels)!),
  );
  return listShort || boundShort;
}

/** A heading, then each reference with its reason (a short clause on a terminal); returns whether a short clause was used. */
function printNoted(v: ImagesView, refs: ImageRef[], heading: string, brief: (r: ImageRef) => string): boolean {
  if (!refs.length) return false;
  const { cli, screen, why } = v;
  let short = false;
  out(v, heading);
  for (const r of refs) {
    const reason = reasonWithRemedy(r.reason, r.remedy, v.node);
    if (!screen.terminal) cli.io.out(`  ${safe(r.name)}: ${safe(reason)}`);
    else {
      out(v, `  - ${screen.ref(r.name, 6)}: ${safe(why ? reason : brief(r))}`);
      short ||= !why;
    }
  }
  return short;
}
