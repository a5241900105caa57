// holdfast disk — what a node's image store holds and what kubelet's image GC would delete
// when the disk fills.
import type { Command } from 'commander';
import type { DiskPicture } from '../../shared/diskPicture';
import { FS_ROLE_TEXT } from '../../shared/diskPicture';
import type { StoreImage } from '../../shared/imageStore';
import { evictionAtPercent, formatAge, formatThreshold, kubeletUsagePercent } from '../../shared/gcPolicy';
import { NEEDED_FLAG_BRIEF, ORDER_BRIEF } from '../../shared/gcForecast';
import { connectsFirstNode, type Cli } from '../context';
import { JSON_HELP, printedAsJson } from '../output';
import type { ColumnFit } from '../fit';
import { humanSize, shortDigest } from '../format';
import { formatPercent } from '../../shared/format';
import { Screen, whyHint } from '../screen';
import { FITTED_NOTE, helpAfter } from '../help';
import { imageName } from '../../shared/imageReference';
import { distroDisplayName } from '../../shared/distro';
import { commandLine } from '../commandLine';

// One percentage format everywhere (shared/format), as the app's Disk tab shows them.
const pct = (n: number | null) => formatPercent(n, '-');
const stateWords = (who: string) => ({ 'in-use': 'in use', durable: 'durable pin', distro: `${who} pin`, unprotected: 'unprotected' }) as const;
/**
 * An image's state, and for a pin the next k3s start strips (the Images tab's verdict,
 * shared/protection, carried as pinnedAfterRestart) that it is lost then.
 */
const stateText = (i: StoreImage, who: string): string =>
  i.state !== 'in-use' && i.pinnedForKubelet && !i.pinnedAfterRestart ? `${stateWords(who)[i.state]}, lost at restart` : stateWords(who)[i.state];

/** How the disk tables give way on a narrow terminal: paths and names are elided, details hidden. */
const FS_COLUMNS: readonly ColumnFit[] = [{ kind: 'ref', min: 20, want: 48 }, { kind: 'text', min: 12 }, { hide: 1, extra: true }, {}, {}];
const STORE_COLUMNS: readonly ColumnFit[] = [{ kind: 'ref', min: 30, want: 40 }, { hide: 2, extra: true }, {}, { hide: 3 }, {}, { hide: 1, extra: true }];

/**
 * The picture as text: file systems, thresholds, the store, the forecast with its needed flags.
 * On a terminal (`screen`), fitted to it, and each needed flag and the order note one short
 * clause (their sentences with `why`).
 */
export function diskText(p: DiskPicture, screen: Screen = Screen.plain, why = false, who = 'k3s'): string {
  const brief = screen.terminal && !why;
  const out: string[] = [];
  out.push(
    screen.table(
      ['FILE SYSTEM OF', 'HOLDS', 'SIZE', 'FREE', 'USED'],
      p.fileSystems.map((f) => [
        Object.values(f.paths)[0] ?? '-',
        f.roles.map((r) => FS_ROLE_TEXT[r]).join(', '),
        f.totalBytes === null ? '?' : humanSize(f.totalBytes),
        humanSize(f.freeBytes),
        pct(kubeletUsagePercent(f)),
      ]),
      FS_COLUMNS,
    ),
  );
  const pol = p.policy;
  const ev = evictionAtPercent(pol.evictionHard.imagefs, p.imagefs?.totalBytes ?? null);
  out.push(
    `\nkubelet's image GC: starts at ${pol.highPercent} % used (${pol.sources.high}), frees down to ${pol.lowPercent} % (${pol.sources.low}); ` +
      `hard eviction at imagefs.available < ${formatThreshold(pol.evictionHard.imagefs)}${ev !== null ? ` (≈ ${Math.round(ev)} % used)` : ''}, nodefs.available < ${formatThreshold(pol.evictionHard.nodefs)} (${pol.sources.evictionHard}).`,
  );
  if (pol.maxAge) {
    out.push(`kubelet's max-age GC: deletes every unpinned image no container used for ${formatAge(pol.maxAge.seconds)} (image-maximum-gc-age=${pol.maxAge.value}, ${pol.maxAge.source}), whatever the disk usage.`);
  }
  out.push(p.imagefs ? `The image file system (snapshots) is at ${pct(kubeletUsagePercent(p.imagefs))} as kubelet counts it.` : 'The image file system could not be measured.');
  for (const n of [...pol.notes, ...p.notes]) out.push(`note: ${n}`);
  if (!p.images || !p.summary || !p.forecast) return screen.text(out.join('\n'));
  const s = p.summary;
  const losing = p.images.filter((i) => i.state !== 'in-use' && i.pinnedForKubelet && !i.pinnedAfterRestart).length;
  out.push(
    `\nImage store: ${s.images} images, ${humanSize(s.storeBytes)} of content — ${s.inUse} in use, ${s.durable} pinned durably, ${s.distro} pinned by ${who}` +
      `${losing ? ` (${losing} lose${losing === 1 ? 's' : ''} the pin at the next ${who} start)` : ''}, ${s.unprotected} unprotected (removing them would free ${humanSize(s.unprotectedBytes)}).`,
  );
  out.push(
    screen.table(
      ['IMAGE', 'ID', 'STATE', 'CRI SIZE', 'FREES ALONE', 'LAST CHANGED'],
      p.images.map((i) => [imageName(i.refs, i.key), shortDigest(i.imageId), stateText(i, who), humanSize(i.criSize), humanSize(i.exclusiveBytes), i.lastChangedAt ?? '-']),
      STORE_COLUMNS,
    ),
  );
  const f = p.forecast;
  // Max-age GC first: it needs no disk pressure, so it comes before the threshold ever does.
  if (f.maxAge) {
    const ageSiteNeeds = f.steps.some((st) => st.needed.some((n) => n.kind === 'site-need'));
    out.push(`\nMax-age GC — ${f.maxAge.text}`);
    if (f.maxAge.needed) {
      out.push(`  WARNING: ${f.maxAge.needed} needed image${f.maxAge.needed === 1 ? ' is' : 's are'} among them — pin ${f.maxAge.needed === 1 ? 'it' : 'them'} (${commandLine(['pin', p.node, ageSiteNeeds ? '--needed' : 'REF'])}) now: the disk need not fill.`);
    }
  }
  out.push(`\nGC forecast — when the image file system reaches ${f.highPercent} %, kubelet deletes (oldest first):`);
  if (f.steps.length === 0) out.push(`  nothing: every image is in use or pinned for kubelet${losing ? ` (${losing} only until the next ${who} start)` : ''}.`);
  f.steps.forEach((st, n) => {
    const mark = st.deleted ? `${n + 1}.` : ' -';
    const name = screen.ref(imageName(st.refs, st.key), mark.length + 40);
    out.push(`  ${mark} ${name}  frees ${humanSize(st.frees)}${st.deleted ? '' : f.maxAge ? '  (by age; by disk only at eviction)' : '  (only at eviction)'}${st.needed.length ? '  NEEDED' : ''}`);
    for (const nf of st.needed) out.push(`       ! ${brief ? NEEDED_FLAG_BRIEF[nf.kind] : nf.text}`);
  });
  if (f.measured) {
    out.push(
      `  kubelet would delete ${f.deletedCount} image${f.deletedCount === 1 ? '' : 's'}, counting ${humanSize(f.kubeletCounts)}; the disk gets ${humanSize(f.realFreed)} back` +
        `${f.usageAfterPercent !== null ? ` and ends at ${f.usageAfterPercent} %` : ''} (target ${f.lowPercent} %: ${humanSize(f.bytesToFree)} to free).`,
    );
  }
  // Images the site needs are pinned in one go; other needed ones (rollback, archive) by name.
  const siteNeeds = f.steps.some((st) => st.deleted && st.needed.some((n) => n.kind === 'site-need'));
  if (f.neededDeleted) out.push(`  WARNING: ${f.neededDeleted} needed image${f.neededDeleted === 1 ? ' is' : 's are'} among them — pin ${f.neededDeleted === 1 ? 'it' : 'them'} (${commandLine(['pin', p.node, siteNeeds ? '--needed' : 'REF'])}) before the disk fills.`);
  out.push(`  Order: ${brief ? ORDER_BRIEF : f.orderNote}`);
  for (const n of f.notes) out.push(`  note: ${n}`);
  if (brief) out.push(whyHint());
  // Tables fit already; the prose lines around them are wrapped to the terminal.
  return screen.text(out.join('\n'));
}

export function registerDiskCommand(program: Command, cli: Cli): void {
  program
    .command('disk')
    .summary("a node's disk and what kubelet's GC deletes first")
    .description("A node's disk: its file systems, kubelet's image GC thresholds, the image store by image, and what GC would delete first when the disk fills.")
    .argument('<node>', 'the node to look at')
    .hook('preAction', connectsFirstNode(cli))
    .option('--json', JSON_HELP)
    .option('--why', 'every reason in full, not one short clause')
    .addHelpText(
      'after',
      helpAfter(
        [
          'holdfast disk lab1-n1',
          'holdfast disk lab1-n1 --why',
          '# A needed image GC would delete: pin it before the disk fills',
          'holdfast pin lab1-n1 --needed',
          "holdfast disk lab1-n1 --json | jq '.forecast'",
        ],
        [
          FITTED_NOTE,
          "The GC thresholds are the node's kubelet arguments (its k3s or RKE2 config.yaml, command line, kubelet config files), else kubelet's and k3s's defaults (85 % / 80 %, eviction at 5 % free); each says where it came from.",
          "With image-maximum-gc-age set, kubelet also deletes every unpinned image unused for that long, whatever the disk usage: the forecast says which, and when.",
        ],
      ),
    )
    .action(async (name: string, o) => {
      const p = await cli.call('disk.picture', { node: name });
      if (printedAsJson(cli, p)) return;
      // The node's distro names who pins and strips (the picture probed it already: no second probe).
      const who = await cli.call('nodes.info', { node: name }).then((i) => distroDisplayName(i.distro), () => distroDisplayName('unknown'));
      cli.io.out(diskText(p, cli.screen(), o.why === true, who));
    });
}
