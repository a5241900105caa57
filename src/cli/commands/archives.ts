// holdfast archives — the files in a node's images dir, what each brings, and whether it can go.
import type { Command } from 'commander';
import { archiveBrief } from '../../shared/archiveRemedy';
import { archivesReport, type ArchivesReport } from '../../shared/archivesReport';
import { distroDisplayName } from '../../shared/distro';
import { cacheVerdictReason, importCacheBrief, importCacheReasons } from '../../shared/importCacheHealth';
import { listTakeoverBrief, listTakeoverReason } from '../../shared/listTrap';
import type { ArchiveInfo } from '../../shared/domain/archives';
import type { Distro } from '../../shared/domain/nodes';
import { rke2ListsNotice, type Rke2ListsNotice } from '../../shared/rke2Lists';
import { archiveVerdict } from '../../shared/removalVerdict';
import { connectsFirstNode, type Cli } from '../context';
import { namedOrLocalNode, withLocalOptions, type LocalFlags } from '../localNode';
import type { ColumnFit } from '../fit';
import { humanSize, terminalSafe as safe } from '../format';
import { whyHint, type Screen } from '../screen';
import { cliProse, imagesWhere, remedyCommand } from '../remedyText';
import { JSON_HELP, printedAsJson } from '../output';
import { FITTED_NOTE, helpAfter } from '../help';

/** How the archives table gives way: KIND goes first, then SIZE and IMPORTED, then PATH and IMAGES are elided. */
const ARCHIVE_COLUMNS: readonly ColumnFit[] = [
  { kind: 'ref', min: 20, want: 40 },
  { hide: 1, extra: true },
  { hide: 2, extra: true },
  { kind: 'ref', min: 30, want: 48 },
  { hide: 3, extra: true },
  {},
];

export function registerArchivesCommand(program: Command, cli: Cli): void {
  withLocalOptions(
    program
      .command('archives')
      .summary("archives in a node's images dir: safe to remove?")
      .description("The files in a node's images dir: what each archive brings, whether k3s imported it, and whether it can be removed safely.")
      .argument('[node]', 'the node whose images dir to list (none with --local)')
      .hook('preAction', connectsFirstNode(cli))
      .option('--json', JSON_HELP)
      .option('--why', 'every reason in full (all that keeps each archive)')
  )
    .addHelpText(
      'after',
      helpAfter(
        ['holdfast archives lab1-n1', 'holdfast archives lab1-n1 --why', '# On the node itself, as root: no SSH', 'holdfast archives --local', '# Then remove one that is safe to remove', 'holdfast rm-archive lab1-n1 holdfast-sample.tar.gz'],
        [
          FITTED_NOTE,
          'Without its archive, an image k3s pinned loses the pin at the next k3s start (then kubelet may delete it): an archive is safe to remove once every image it brings is complete and durably pinned (holdfast pin NODE --archive PATH).',
        ],
      ),
    )
    .action((given: string | undefined, o: ArchivesOptions) => listArchives(cli, given, o));
}

/** The options of archives, as commander parses them. */
interface ArchivesOptions extends LocalFlags {
  why?: boolean;
}

/** A file with its reason in words (cli/remedyText cliProse). */
type WordedArchive = ArchiveInfo & { reason: string };

/** A node's files, and the distro that imports them. */
interface ArchivesRead {
  node: string;
  archives: WordedArchive[];
  /** Who imports, as the text names it ("k3s", "RKE2"). */
  who: string;
  rke2Lists: Rke2ListsNotice | null;
}

// complete (the node: named, or this machine with --local) → run (archives.list, the node's
// distro) → print (JSON, or the table and what keeps each archive; --why asks archives.check).
async function listArchives(cli: Cli, given: string | undefined, o: ArchivesOptions): Promise<void> {
  const read = await readArchives(cli, await namedOrLocalNode(cli, o, given));
  // the node's import cache health once, beside its files (shared/archivesReport)
  if (printedAsJson(cli, archivesJson(read.node, read.archives, read.rke2Lists))) return;
  const view: ArchivesView = { ...read, cli, screen: cli.screen(), why: o.why === true };
  if (read.archives.length === 0) return printEmpty(view);
  cli.io.out(archivesTable(view));
  const blocked = read.archives.filter((x) => x.kind === 'archive' && !x.safeToRemove);
  // --why: every problem of each archive (its reason names the first and counts the others).
  const problems = view.why ? await Promise.all(blocked.map((a) => cli.call('archives.check', { node: read.node, path: a.path }).then((c) => c.problems.map(cliProse)))) : [];
  printBlocked(view, blocked, problems);
  const cautioned = printCautioned(view);
  printTakeovers(view);
  rke2Line(view);
  const cache = read.archives[0]!.importCache;
  cacheLines(view);
  const hinted = blocked.length || cautioned.length || read.archives.some((x) => x.takesOver?.length) || (cache && importCacheBrief(cache, read.who)) || read.rke2Lists;
  if (view.screen.terminal && !view.why && hinted) out(view, `\n${whyHint()}`);
}

async function readArchives(cli: Cli, node: string): Promise<ArchivesRead> {
  // Every reason in words: a remedy in one is its command (cli/remedyText), in the table and in --json.
  const archives = (await cli.call('archives.list', { node })).map((a) => ({ ...a, reason: cliProse(a.reason) }));
  // The node's distro names who imports (the listing probed it already: no second probe).
  const distro = await cli.call('nodes.info', { node }).then((i) => i.distro, (): Distro => 'unknown');
  // RKE2 writes its own image lists when no archive is at the top level (shared/rke2Lists).
  const rke2Lists = rke2ListsNotice(node, distro, archives.map((a) => a.path), imagesWhere(node));
  return { node, archives, who: distroDisplayName(distro), rke2Lists };
}

/** What the printers share: the node's files, the screen, and whether every reason is given in full. */
interface ArchivesView extends ArchivesRead {
  cli: Cli;
  screen: Screen;
  why: boolean;
}

/** A line for a person: wrapped to the terminal. */
const out = (v: ArchivesView, s: string) => v.cli.io.out(v.screen.text(s));

function printEmpty(v: ArchivesView): void {
  v.cli.io.out(`the images dir of ${v.node} is empty`);
  rke2Line(v);
  if (v.screen.terminal && !v.why && v.rke2Lists) out(v, `\n${whyHint()}`);
}

function archivesTable(v: ArchivesView): string {
  const { screen, who } = v;
  return screen.table(
    ['PATH', 'KIND', 'SIZE', 'IMAGES', 'IMPORTED', 'SAFE TO REMOVE'],
    v.archives.map((a) => [
      // Fitted, "(cached by k3s)" (or RKE2) goes on a line of its own, so eliding the path keeps it.
      screen.width !== null && a.cachedByK3s ? [a.path, `(cached by ${who})`] : a.path + (a.cachedByK3s ? ` (cached by ${who})` : ''),
      a.kind,
      humanSize(a.size),
      a.error ? `unreadable: ${a.error}` : a.images.length ? a.images : '-',
      a.kind === 'archive' ? (a.imported ? 'yes' : 'no') : '-',
      // The removal's verdict (shared/removalVerdict): "yes, but" while a warning stands, said below.
      a.kind === 'archive' ? archiveVerdict(a).cell : '-',
    ]),
    ARCHIVE_COLUMNS,
  );
}

/** What keeps each archive: a short clause and its remedy on a terminal, in full with --why or piped. */
function printBlocked(v: ArchivesView, blocked: readonly WordedArchive[], problems: readonly string[][]): void {
  const { cli, screen, why } = v;
  for (const [n, a] of blocked.entries()) {
    if (!screen.terminal && !why) {
      cli.io.out(`\n${safe(a.path)}: ${safe(a.reason)}`);
      continue;
    }
    if (!screen.terminal) {
      cli.io.out(`\n${safe(a.path)}:\n${problems[n]!.map((x) => `  - ${safe(x)}`).join('\n')}`);
      continue;
    }
    cli.io.out('');
    const brief = archiveBrief(a, v.who);
    out(v, `${screen.ref(a.path, brief.length + 2)}: ${why ? '' : brief}`.trimEnd());
    if (why) for (const x of problems[n]!) out(v, `  - ${safe(x)}`);
    else if (a.remedy) cli.io.out(screen.command(`  → ${remedyCommand(a.remedy)}`));
  }
}

/** Removable, but what the removal sets off (RKE2's own lists): a short clause on a terminal, in full with --why and piped. */
function printCautioned(v: ArchivesView): ArchiveInfo[] {
  const cautioned = v.archives.filter((x) => x.kind === 'archive' && archiveVerdict(x).tone === 'caution');
  for (const a of cautioned) {
    v.cli.io.out('');
    if (v.screen.terminal && !v.why) {
      const brief = archiveBrief(a, v.who);
      out(v, `${v.screen.ref(a.path, brief.length + 2)}: ${brief}`);
    } else for (const w of a.removalWarnings!) out(v, `${safe(a.path)}: ${safe(w.reason)}`);
  }
  return cautioned;
}

/** .txt lists that hand a durable pin to k3s through another tag of its image. */
function printTakeovers(v: ArchivesView): void {
  for (const a of v.archives.filter((x) => x.takesOver?.length)) {
    v.cli.io.out('');
    out(v, `${safe(a.path)}: ${safe(v.why ? listTakeoverReason(a.path, a.takesOver!, v.who) : listTakeoverBrief(a.takesOver!))}`);
  }
}

function rke2Line(v: ArchivesView): void {
  if (!v.rke2Lists) return;
  v.cli.io.out('');
  out(v, safe(v.why ? v.rke2Lists.reason : v.rke2Lists.brief));
}

/** k3s's import cache: one line for the node (every finding with --why), then with --why what the next start does with each file. */
function cacheLines(v: ArchivesView): void {
  const { cli, why, who } = v;
  const cache = v.archives[0]!.importCache;
  const perFile = why ? v.archives.map((a) => ({ path: a.path, reason: cacheVerdictReason(a.cache, who) })).filter((x) => x.reason !== null) : [];
  const brief = cache ? importCacheBrief(cache, who) : null;
  if (cache && brief) {
    cli.io.out('');
    if (!why) out(v, safe(brief));
    else for (const r of importCacheReasons(cache, remedyCommand, v.node, who)) out(v, safe(r));
  }
  if (!perFile.length) return;
  cli.io.out('');
  out(v, '.cache.json at the next start, file by file:');
  for (const x of perFile) out(v, `  ${safe(x.path)}: ${safe(x.reason!)}`);
}

/** `archives --json`: the node's report (its files, the import cache's health) and RKE2's lists notice. */
export function archivesJson(node: string, archives: readonly ArchiveInfo[], rke2Lists: Rke2ListsNotice | null): ArchivesReport & { rke2Lists: Rke2ListsNotice | null } {
  return { ...archivesReport(node, archives), rke2Lists };
}
