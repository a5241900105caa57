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
import { localNodeOf, withLocalOptions } from '../localNode';
import { HoldfastError } from '../../core/errors';
import type { ColumnFit } from '../fit';
import { humanSize, terminalSafe as safe } from '../format';
import { whyHint } from '../screen';
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
    .action(async (given: string | undefined, o) => {
      const name = (await localNodeOf(cli, o, given ? [given] : [])) ?? given;
      if (!name) throw new HoldfastError('INVALID_INPUT', 'name the node (or --local, on the node itself)', { hint: 'holdfast node ls lists the nodes Holdfast knows.' });
      const archives = await cli.call('archives.list', { node: name });
      // The node's distro names who imports (the listing probed it already: no second probe).
      const distro = await cli.call('nodes.info', { node: name }).then((i) => i.distro, (): Distro => 'unknown');
      const who = distroDisplayName(distro);
      // RKE2 writes its own image lists when no archive is at the top level (shared/rke2Lists).
      const rke2Lists = rke2ListsNotice(name, distro, archives.map((a) => a.path));
      // the node's import cache health once, beside its files (shared/archivesReport)
      if (printedAsJson(cli, archivesJson(name, archives, rke2Lists))) return;
      const screen = cli.screen();
      const why = o.why === true;
      const out = (s: string) => cli.io.out(screen.text(s));
      const rke2Line = () => {
        if (!rke2Lists) return;
        cli.io.out('');
        out(safe(why ? rke2Lists.reason : rke2Lists.brief));
      };
      if (archives.length === 0) {
        cli.io.out(`the images dir of ${name} is empty`);
        rke2Line();
        if (screen.terminal && !why && rke2Lists) out(`\n${whyHint()}`);
        return;
      }
      // k3s's import cache: one line for the node (every finding with --why).
      const cache = archives[0]!.importCache;
      // --why: what the next start does with each file because of the cache, and why.
      const perFile = why ? archives.map((a) => ({ path: a.path, reason: cacheVerdictReason(a.cache, who) })).filter((x) => x.reason !== null) : [];
      const cacheLine = () => {
        const brief = cache ? importCacheBrief(cache, who) : null;
        if (cache && brief) {
          cli.io.out('');
          if (!why) out(safe(brief));
          else for (const r of importCacheReasons(cache, name, who)) out(safe(r));
        }
        if (!perFile.length) return;
        cli.io.out('');
        out('.cache.json at the next start, file by file:');
        for (const x of perFile) out(`  ${safe(x.path)}: ${safe(x.reason!)}`);
      };
      cli.io.out(
        screen.table(
          ['PATH', 'KIND', 'SIZE', 'IMAGES', 'IMPORTED', 'SAFE TO REMOVE'],
          archives.map((a) => [
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
        ),
      );
      const blocked = archives.filter((x) => x.kind === 'archive' && !x.safeToRemove);
      // --why: every problem of each archive (its reason names the first and counts the others).
      const problems = why ? await Promise.all(blocked.map((a) => cli.call('archives.check', { node: name, path: a.path }).then((c) => c.problems))) : [];
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
        const brief = archiveBrief(a, who);
        out(`${screen.ref(a.path, brief.length + 2)}: ${why ? '' : brief}`.trimEnd());
        if (why) for (const x of problems[n]!) out(`  - ${safe(x)}`);
        else if (a.remedy) cli.io.out(screen.command(`  → ${a.remedy.command}`));
      }
      // Removable, but what the removal sets off (RKE2's own lists): a short clause on a terminal, in full with --why and piped.
      const cautioned = archives.filter((x) => x.kind === 'archive' && archiveVerdict(x).tone === 'caution');
      for (const a of cautioned) {
        cli.io.out('');
        if (screen.terminal && !why) {
          const brief = archiveBrief(a, who);
          out(`${screen.ref(a.path, brief.length + 2)}: ${brief}`);
        } else for (const w of a.removalWarnings!) out(`${safe(a.path)}: ${safe(w.reason)}`);
      }
      // .txt lists that hand a durable pin to k3s through another tag of its image.
      for (const a of archives.filter((x) => x.takesOver?.length)) {
        cli.io.out('');
        out(`${safe(a.path)}: ${safe(why ? listTakeoverReason(a.path, a.takesOver!, who) : listTakeoverBrief(a.takesOver!))}`);
      }
      rke2Line();
      cacheLine();
      const hinted = blocked.length || cautioned.length || archives.some((x) => x.takesOver?.length) || (cache && importCacheBrief(cache, who)) || rke2Lists;
      if (screen.terminal && !why && hinted) out(`\n${whyHint()}`);
    });
}

/** `archives --json`: the node's report (its files, the import cache's health) and RKE2's lists notice. */
export function archivesJson(node: string, archives: readonly ArchiveInfo[], rke2Lists: Rke2ListsNotice | null): ArchivesReport & { rke2Lists: Rke2ListsNotice | null } {
  return { ...archivesReport(node, archives), rke2Lists };
}
