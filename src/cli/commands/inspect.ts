// holdfast inspect — every node at once: reachability, versions, pins and their fate, archives,
// disk, and where the nodes disagree (drift). Text, JSON, a self-contained HTML page or CSV.
import path from 'node:path';
import type { Command } from 'commander';
import { writeFileAtomic } from '../../core/config/atomic';
import { HoldfastError } from '../../core/errors';
import { notInspectedStatus, type FleetNodeResult, type FleetReport, type NodeRisk } from '../../shared/fleet';
import { DEFAULT_FLEET_CONCURRENCY, DEFAULT_NODE_TIMEOUT_MS } from '../../core/usecases/fleet/defaults';
import { fleetDistroName, isLowDisk, losingImagesOf, warningsOf, type LowDiskRule } from '../../core/usecases/fleet/summary';
import { formatBytes } from '../../shared/format';
import { atRiskBrief, atRiskOf, verificationRemedyText } from '../../shared/needs';
import type { ArgsOf } from '../../shared/contract';
import type { Distro, NodeDef } from '../../shared/domain/nodes';
import { plural, word } from '../../shared/wording';
import { pinCounts, protectionBrief } from '../../shared/protection';
import { imageName } from '../../shared/imageReference';
import { criPinning } from '../../shared/versions';
import { renderMetrics } from '../../shared/metrics';
import { sameMachineText } from '../../shared/sameMachine';
import { distroDisplayName } from '../../shared/distro';
import { commandLine } from '../commandLine';
import type { Cli } from '../context';
import { JSON_HELP, printedAsJson } from '../output';
import { fleetReportInWords } from '../imageRefJson';
import { positiveInt, positiveSeconds } from '../options';
import { savedNodeHint } from '../accessText';
import { runFleet } from '../fleetRun';
import { localNodeOf, withLocalOptions, type LocalFlags } from '../localNode';
import type { ColumnFit } from '../fit';
import { terminalSafe as safe } from '../format';
import { Screen, whyHint } from '../screen';
import { remedyCommand } from '../remedyText';
import { FITTED_NOTE, helpAfter } from '../help';
import { lostPinsText } from '../lostPins';
import { kubeNodeHint } from '../kubeNodeText';
import { registriesSection } from '../registriesText';
import { peersSection } from '../peersText';
import { guardSection } from '../guardText';

/** The node's k3s or RKE2 as people write it; "unknown" when neither answered (no assumption shown). */
const distroName = (d: Distro) => (d === 'unknown' ? 'unknown' : distroDisplayName(d));

// `inspect` is the service's fleet run (fleet.start with --concurrency and --timeout), followed
// through its fleet.node and fleet.done events in process; Ctrl-C is fleet.cancel, which still
// reports every node (those that had not answered as cancelled).
//
// The HTML and CSV reports load when the command runs, not when the CLI starts.
const reports = () => Promise.all([import('../../core/usecases/fleet/html'), import('../../core/usecases/fleet/csv')]);

const short = (nodes: string[], max = 4) => (nodes.length <= max ? nodes.join(', ') : `${nodes.slice(0, max).join(', ')} +${nodes.length - max}`) || '-';

/** How the fleet table gives way on a narrow terminal: what is at risk stays, versions and counts go first. */
const FLEET_COLUMNS: readonly ColumnFit[] = [
  {}, // NODE: a name to type, never shortened
  { kind: 'text', min: 6, hide: 5, extra: true }, // GROUP
  { kind: 'text', min: 11 }, // STATUS
  { kind: 'text', min: 8, hide: 3, extra: true }, // DISTRO
  { hide: 2, extra: true }, // CONTAINERD
  { hide: 4, extra: true }, // REFS
  { hide: 8 }, // DURABLE
  { hide: 7 }, // K3S
  { hide: 6 }, // NONE
  {}, // LOSE PIN
  {}, // AT RISK
  { hide: 1, extra: true }, // ARCHIVES
  {}, // DISK FREE
];
const DRIFT_COLUMNS: readonly ColumnFit[] = [{ kind: 'ref', min: 30, want: 50 }, {}, { kind: 'text', min: 12 }, { kind: 'text', min: 12 }];

/**
 * Why a node needs attention, for a person at a terminal: each kind of trouble on its line, then
 * the images behind it, each named (elided to fit) with one short clause (its whole reason with
 * `why`). The same facts as the summary's sentences (core/usecases/fleet/summary nodeRisk), which list
 * every name in one line.
 */
function attentionLines(r: NodeRisk, n: FleetNodeResult | undefined, rule: LowDiskRule, screen: Screen, why: boolean): string[] {
  const out: string[] = [];
  const head = (s: string) => out.push(`  ${r.node}: ${s}`);
  const item = (ref: string, clause: string) => out.push(`  ${' '.repeat(r.node.length)}  - ${screen.ref(ref, r.node.length + 8)}: ${safe(clause)}`);
  // (its error's hint follows, once, as on every output: fleetText)
  if (r.unreachable) head(`${notInspectedStatus(n?.error?.code).toUpperCase()}: ${safe(n?.error?.message ?? 'unknown error')}`);
  if (r.sameMachine) head(`${safe(sameMachineText(r.sameMachine))}: counted once in the totals`);
  for (const w of n ? warningsOf(n) : []) head(safe(w.message));
  if (r.lostPins) head(`${plural(r.lostPins, 'durable pin')} Holdfast made ${word(r.lostPins, 'is')} gone (below)`);
  const atRisk = r.atRisk ?? [];
  if (atRisk.length) {
    head(`${plural(atRisk.length, 'needed image')} at risk (a pod that needs ${atRisk.length === 1 ? 'it' : 'them'} may not start):`);
    for (const a of atRisk) item(a.refs[0] ?? '', `${why ? a.because : atRiskBrief(a, n?.images, n?.needs)}${a.heldBy?.length ? ` (copy: ${a.heldBy.join(', ')})` : ''}`);
    if (atRisk.some((a) => a.pinnable)) out.push(screen.command(`  ${' '.repeat(r.node.length)}  → ${commandLine(['pin', r.node, '--needed'])}`));
    if (n?.needs?.verification) out.push(`  ${' '.repeat(r.node.length)}  → ${safe(verificationRemedyText(n.needs.verification, distroDisplayName(n.versions?.distro ?? 'unknown')))}`);
  }
  if (r.losingImages?.length) {
    const mode = criPinning(n?.versions?.containerdVersion);
    const who = distroDisplayName(n?.versions?.distro ?? 'unknown');
    head(`${plural(r.losingImages.length, 'image')} ${word(r.losingImages.length, 'loses')} ${word(r.losingImages.length, 'its')} pin at the next ${who} start:`);
    for (const p of r.losingImages) {
      const refs = (n?.images ?? []).filter((i) => p.refs.includes(i.name));
      item(imageName(p.refs, p.imageId ?? ''), why ? p.reason : protectionBrief({ afterRestart: false, deciding: p.deciding }, refs, mode, who));
    }
  }
  if (n && isLowDisk(n, rule) && n.disk) head(`low disk: ${formatBytes(n.disk.freeBytes)} free${n.disk.totalBytes !== null ? ` of ${formatBytes(n.disk.totalBytes)}` : ''} at ${safe(n.disk.path)}`);
  return out;
}

/**
 * The default output: one line per node, then drift, then what needs attention. On a terminal
 * (`screen`), fitted to it, and each needed image at risk in one short clause (its whole reason
 * with `why`).
 */
export function fleetText(report: FleetReport, defs: NodeDef[], screen: Screen = Screen.plain, why = false): string {
  const s = report.summary;
  const out: string[] = [fleetTable(report, defs, screen)];
  out.push(
    `\n${s.reachable} of ${s.nodes} nodes reachable · ${s.atRiskImages ?? 0} needed image${s.atRiskImages === 1 ? '' : 's'} at risk · ${s.losingPins} image${s.losingPins === 1 ? '' : 's'} lose${s.losingPins === 1 ? 's' : ''} ${s.losingPins === 1 ? 'its' : 'their'} pin at the next ${fleetDistroName(report.nodes)} start · ${s.lowDisk} low on disk · ${(s.durationMs / 1000).toFixed(1)} s`,
  );
  // One machine configured twice: its first entry stands for it in the totals above.
  for (const g of s.sameMachine ?? []) out.push(`Same machine: ${safe(sameMachineText(g))}: counted once in these totals.`);
  out.push(...noSourceLines(report));
  out.push(...driftLines(report, screen));
  out.push(...registriesSection(report.nodes));
  out.push(...peersSection(report.nodes, defs));
  out.push(...guardSection(report.nodes, why));
  const attention = attentionSection(report, screen, why);
  out.push(...attention.lines);
  let shortened = attention.shortened;
  const lost = report.nodes.filter((n) => n.lostPins?.length);
  if (lost.length) {
    out.push("\nPins lost behind Holdfast's back:");
    for (const n of lost) out.push(`  ${n.node}:\n${lostPinsText(n.lostPins!, '    ', screen, why, distroDisplayName(n.versions?.distro ?? 'unknown'))}`);
    shortened ||= screen.terminal && !why;
  }
  if (shortened) out.push(whyHint('NODE'));
  // The tables fit already; the lines around them are wrapped to the terminal.
  return screen.text(out.join('\n'));
}

/** One row per node: its status, versions, pin counts, what is at risk, its archives and disk. */
function fleetTable(report: FleetReport, defs: NodeDef[], screen: Screen): string {
  const group = new Map(defs.map((d) => [d.name, d.group ?? '']));
  const rule = report.summary.lowDiskRule;
  return screen.table(
    ['NODE', 'GROUP', 'STATUS', 'DISTRO', 'CONTAINERD', 'REFS', 'DURABLE', 'K3S', 'NONE', 'LOSE PIN', 'AT RISK', 'ARCHIVES', 'DISK FREE'],
    report.nodes.map((n) => {
      if (!n.reachable) {
        return [n.node, group.get(n.node) || '-', notInspectedStatus(n.error?.code).toUpperCase(), '-', '-', '-', '-', '-', '-', '-', '-', '-', '-'];
      }
      const imgs = n.images ?? [];
      const c = pinCounts(imgs);
      const v = n.versions;
      const archives = (n.archives ?? []).filter((a) => a.kind === 'archive').length;
      const disk = n.disk ? `${formatBytes(n.disk.freeBytes)}${isLowDisk(n, rule) ? ' LOW' : ''}` : '?';
      return [
        n.node,
        group.get(n.node) || '-',
        'ok',
        v ? (v.distroVersion ? `${distroName(v.distro)} ${v.distroVersion}` : distroName(v.distro)) : '-',
        v?.containerdVersion ?? '-',
        imgs.length,
        c.durable,
        c.distro,
        c.none,
        losingImagesOf(n).length,
        atRiskOf(n.images, n.needs).length,
        archives,
        disk,
      ];
    }),
    FLEET_COLUMNS,
  );
}

/** Which nodes Holdfast could not read needs for: their verdicts rest on provenance alone. */
function noSourceLines(report: FleetReport): string[] {
  const blind = report.nodes.filter((n) => n.needs && n.needs.basis === 'provenance');
  if (!blind.length) return [];
  const out = [`No source of site needs on ${blind.length === report.nodes.length ? 'any node' : short(blind.map((n) => n.node))}: images from air-gap archives count as needed there.`];
  for (const n of blind.slice(0, 8)) {
    out.push(`  ${n.node}: ${safe(n.needs!.noSource ?? 'none read')}`);
    if (n.needs!.unmatched) out.push(`  ${' '.repeat(n.node.length)}  → ${kubeNodeHint(n.node, n.needs!.unmatched)}`);
  }
  return out;
}

/** The images that differ across the reachable nodes, or that none does. */
function driftLines(report: FleetReport, screen: Screen): string[] {
  if (report.drift.length) {
    return [
      `\nDrift: ${plural(report.drift.length, 'image')} ${report.drift.length === 1 ? 'differs' : 'differ'} across the reachable nodes (pinned = pinned now)`,
      screen.table(
        ['IMAGE', 'PRESENT', 'MISSING ON', 'UNPINNED ON'],
        report.drift.map((d) => [d.name, `${d.presentOn.length}/${d.presentOn.length + d.missingOn.length}`, short(d.missingOn), short(d.unpinnedOn)]),
        DRIFT_COLUMNS,
      ),
    ];
  }
  return report.summary.reachable > 1 ? ['\nNo drift: the reachable nodes have the same images, pinned alike.'] : [];
}

/** The nodes that need attention, and whether a short clause stood for a reason (on a terminal). */
function attentionSection(report: FleetReport, screen: Screen, why: boolean): { lines: string[]; shortened: boolean } {
  const s = report.summary;
  if (!s.atRisk.length) return { lines: [], shortened: false };
  const out = ['\nNeeds attention:'];
  let shortened = false;
  // A refusal's remedy (a host key to trust) worded as the command that works here.
  const hints = new Map(report.nodes.map((n) => [n.node, n.error ? savedNodeHint(n.error) : undefined]));
  const results = new Map(report.nodes.map((n) => [n.node, n]));
  for (const r of s.atRisk) {
    const pad = `  ${' '.repeat(r.node.length)}  `;
    if (screen.terminal) {
      out.push(...attentionLines(r, results.get(r.node), s.lowDiskRule, screen, why));
      shortened ||= !why && (Boolean(r.atRisk?.length) || r.losingPins > 0);
    } else {
      // Reasons and hints quote the nodes' own errors: one line each, harmless.
      for (const why of r.reasons) out.push(`  ${r.node}: ${safe(why)}`);
    }
    const hint = hints.get(r.node);
    if (hint) out.push(`${pad}→ ${safe(hint)}`);
    if (screen.terminal) continue;
    // Each needed image at risk: what it is, who needs it, where a copy is.
    for (const a of r.atRisk ?? []) out.push(`${pad}- ${safe(a.refs[0] ?? '')}: ${safe(a.because)}${a.heldBy?.length ? ` (copy: ${safe(a.heldBy.join(', '))})` : ''}`);
    if (r.atRisk?.some((a) => a.pinnable)) out.push(`${pad}→ ${commandLine(['pin', r.node, '--needed'])}`);
    const verification = results.get(r.node)?.needs?.verification;
    if (verification) out.push(`${pad}→ ${safe(verificationRemedyText(verification, distroDisplayName(results.get(r.node)?.versions?.distro ?? 'unknown')))}`);
  }
  return { lines: out, shortened };
}

export function registerInspectCommand(program: Command, cli: Cli): void {
  const cmd = program
    .command('inspect')
    .summary('many nodes at once: pins, needs, disk, drift')
    .description(
      'Inspect many nodes in parallel: versions, pins and their fate at the next k3s start, needed images at risk, archives, disk, and where the nodes disagree (drift).',
    )
    .argument('[nodes...]', 'nodes to inspect (default: every node)')
    .option('--all', 'every configured node (the default)')
    .option('--group <group>', 'the nodes of one group (site)')
    .option('--json', JSON_HELP)
    .option('--why', 'every reason in full, not one short clause')
    .option('--html <file>', 'also write the report as one HTML file')
    .option('--csv <file>', 'also write one CSV row per node and reference')
    .option('--openmetrics <file>', "also write `holdfast metrics`' Prometheus series, a node label on each")
    .option('--concurrency <n>', 'nodes inspected at once', positiveInt, DEFAULT_FLEET_CONCURRENCY)
    .option('--timeout <seconds>', 'per node, to connect and list', positiveSeconds, DEFAULT_NODE_TIMEOUT_MS / 1000);
  withLocalOptions(cmd)
    .addHelpText(
      'after',
      helpAfter(
        [
          'holdfast inspect',
          'holdfast inspect lab1-n1 lab1-n2 --why',
          'holdfast inspect --group lab1 --html lab1.html --csv lab1.csv',
          '# Slow links: fewer nodes at once, more time each',
          'holdfast inspect --all --concurrency 4 --timeout 60',
          "holdfast inspect --json | jq '.summary'",
          '# Every node\'s series for Prometheus (node_exporter\'s textfile collector)',
          'holdfast inspect --all --openmetrics /var/lib/node-exporter/fleet.prom',
          '# On the node itself, as root: no SSH',
          'sudo holdfast inspect --local',
        ],
        [
          'The HTML file is self-contained: mail it or open it on a machine without Holdfast.',
          'Exits 1 when a node is unreachable; the report still covers the others and gives its error. Ctrl-C stops the run and still reports every node.',
          FITTED_NOTE,
        ],
      ),
    )
    .action((names: string[], o: InspectOptions) => inspectFleet(cli, names, o));
}

/** The options of inspect, as commander parses them. */
interface InspectOptions extends LocalFlags {
  all?: boolean;
  group?: string;
  why?: boolean;
  html?: string;
  csv?: string;
  openmetrics?: string;
  concurrency: number;
  timeout: number;
}

// validate (nodes named, --all, --group, --local: one way) and complete (--local: this machine)
// into fleet.start's request → run (the fleet run, followed) → write the files asked for →
// print (JSON or the text) → exit 1 when a node was not inspected.
async function inspectFleet(cli: Cli, names: string[], o: InspectOptions): Promise<void> {
  const { report, nodes: ran } = await runFleet(cli, await fleetRequest(cli, names, o));
  const inRun = new Set(ran);
  const defs = (await cli.call('nodes.list', {})).filter((d) => inRun.has(d.name));
  await writeReports(cli, report, o);
  if (!printedAsJson(cli, fleetReportInWords(report))) {
    cli.io.out(fleetText(report, defs, cli.screen(), o.why === true));
    if (o.html) cli.io.out(`wrote ${o.html}`);
    if (o.csv) cli.io.out(`wrote ${o.csv}`);
    if (o.openmetrics) cli.io.out(`wrote ${o.openmetrics}`);
  }
  const down2 = report.nodes.filter((n) => !n.reachable);
  if (down2.length) {
    const why = down2.every((n) => notInspectedStatus(n.error?.code) === 'unreachable') ? 'unreachable' : 'not inspected';
    throw new HoldfastError('UNREACHABLE', `${down2.length} of ${plural(report.nodes.length, 'node')} ${why}: ${short(down2.map((n) => n.node), 8)}`, {
      hint: "The report covers the others and gives each such node's error and what to do.",
    });
  }
}

/** The fleet run the arguments ask for: the nodes named, a group, this machine (--local) or every node. */
async function fleetRequest(cli: Cli, names: string[], o: InspectOptions): Promise<ArgsOf<'fleet.start'>> {
  if (names.length && (o.all || o.group)) throw new HoldfastError('INVALID_INPUT', 'name nodes, or use --all or --group, not both');
  if (o.all && o.group) throw new HoldfastError('INVALID_INPUT', '--all and --group exclude each other');
  if (o.local && (o.all || o.group)) throw new HoldfastError('INVALID_INPUT', '--local reads this machine: not with --all or --group');
  const local = await localNodeOf(cli, o, names);
  return {
    ...(local ? { nodes: [local] } : names.length ? { nodes: names } : {}),
    ...(o.group ? { group: o.group } : {}),
    concurrency: o.concurrency,
    timeout: o.timeout,
    ...(o.openmetrics ? { diskPicture: true } : {}),
  };
}

/** The HTML, CSV and OpenMetrics files asked for. */
async function writeReports(cli: Cli, report: FleetReport, o: InspectOptions): Promise<void> {
  const [{ fleetHtml }, { fleetCsv }] = await reports();
  if (o.html) await writeFileAtomic(path.resolve(o.html), fleetHtml(report, remedyCommand), 0o644);
  if (o.csv) await writeFileAtomic(path.resolve(o.csv), fleetCsv(report, remedyCommand), 0o644);
  // The same series as `holdfast metrics`, one node label each. The imagefs and GC threshold
  // series come from each reached node's disk picture, measured by the inspection on its own
  // connection when --openmetrics asked for it (fleet.start diskPicture): no second connection
  // per node, which at 500 nodes held 2,000 descriptors open until the command ended.
  if (!o.openmetrics) return;
  const missed = report.nodes.filter((n) => n.reachable && !n.diskPicture);
  const disks = report.nodes.map((n) => n.diskPicture ?? null);
  const text = renderMetrics(report.nodes.map((result, i) => ({ label: result.node, result, disk: disks[i] })), Math.floor(Date.parse(report.generatedAt) / 1000));
  await writeFileAtomic(path.resolve(o.openmetrics), text, 0o644);
  if (missed.length) {
    const first = missed[0]!;
    cli.io.err(
      `warning: no image file system or GC threshold series for ${plural(missed.length, 'node')} (${short(missed.map((m) => m.node))}): ${first.node}: ${safe(first.diskPictureError?.message ?? 'not measured')}`,
    );
  }
}
