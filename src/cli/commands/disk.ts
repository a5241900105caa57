// holdfast disk | prune — what a node's image store holds, what kubelet's image GC would delete
// when the disk fills, and the safe cleanup (only images no container uses, no pin protects and
// no rollback needs; the dry run lists exactly what the real run removes).
import type { Command } from 'commander';
import { HoldfastError } from '../../core/errors';
import type { DiskPicture } from '../../shared/diskPicture';
import { FS_ROLE_TEXT } from '../../shared/diskPicture';
import type { StoreImage } from '../../shared/imageStore';
import { evictionAtPercent, formatThreshold, kubeletUsagePercent } from '../../shared/gcPolicy';
import { DEFAULT_KEEP_VERSIONS } from '../../shared/imageVersions';
import { MAX_KEEP_VERSIONS, PRUNE_KEEP_BRIEF, type PrunePlan, type PruneResult } from '../../shared/prunePlan';
import { NEEDED_FLAG_BRIEF, ORDER_BRIEF } from '../../shared/gcForecast';
import { connectsFirstNode, type Cli } from '../context';
import type { ColumnFit } from '../fit';
import { humanSize, shortDigest } from '../format';
import { formatPercent } from '../../shared/format';
import { Screen, whyHint } from '../screen';
import { FITTED_NOTE, helpAfter } from '../help';
import { mapLimit } from '../../shared/mapLimit';
import { imageName } from '../../shared/reference';

function keepVersions(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > MAX_KEEP_VERSIONS) throw new HoldfastError('INVALID_INPUT', `--keep-versions: "${v}" is not a whole number from 1 to ${MAX_KEEP_VERSIONS}`);
  return n;
}

// One percentage format everywhere (shared/format), as the app's Disk tab shows them.
const pct = (n: number | null) => formatPercent(n, '-');
const STATE_TEXT = { 'in-use': 'in use', durable: 'durable pin', k3s: 'k3s pin', unprotected: 'unprotected' } as const;
/**
 * An image's state, and for a pin the next k3s start strips (the Images tab's verdict,
 * shared/protection, carried as pinnedAfterRestart) that it is lost then.
 */
const stateText = (i: StoreImage): string =>
  i.state !== 'in-use' && i.pinnedForKubelet && !i.pinnedAfterRestart ? `${STATE_TEXT[i.state]}, lost at restart` : STATE_TEXT[i.state];

/** How the disk tables give way on a narrow terminal: paths and names are elided, details hidden. */
const FS_COLUMNS: readonly ColumnFit[] = [{ kind: 'ref', min: 20, want: 48 }, { kind: 'text', min: 12 }, { hide: 1, extra: true }, {}, {}];
const STORE_COLUMNS: readonly ColumnFit[] = [{ kind: 'ref', min: 30, want: 40 }, { hide: 2, extra: true }, {}, { hide: 3 }, {}, { hide: 1, extra: true }];

/**
 * The picture as text: file systems, thresholds, the store, the forecast with its needed flags.
 * On a terminal (`screen`), fitted to it, and each needed flag and the order note one short
 * clause (their sentences with `why`).
 */
export function diskText(p: DiskPicture, screen: Screen = Screen.plain, why = false): string {
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
  out.push(p.imagefs ? `The image file system (snapshots) is at ${pct(kubeletUsagePercent(p.imagefs))} as kubelet counts it.` : 'The image file system could not be measured.');
  for (const n of [...pol.notes, ...p.notes]) out.push(`note: ${n}`);
  if (!p.images || !p.summary || !p.forecast) return screen.text(out.join('\n'));
  const s = p.summary;
  const losing = p.images.filter((i) => i.state !== 'in-use' && i.pinnedForKubelet && !i.pinnedAfterRestart).length;
  out.push(
    `\nImage store: ${s.images} images, ${humanSize(s.storeBytes)} of content — ${s.inUse} in use, ${s.durable} pinned durably, ${s.k3s} pinned by k3s` +
      `${losing ? ` (${losing} lose${losing === 1 ? 's' : ''} the pin at the next k3s start)` : ''}, ${s.unprotected} unprotected (removing them would free ${humanSize(s.unprotectedBytes)}).`,
  );
  out.push(
    screen.table(
      ['IMAGE', 'ID', 'STATE', 'CRI SIZE', 'FREES ALONE', 'LAST CHANGED'],
      p.images.map((i) => [imageName(i.refs, i.key), shortDigest(i.imageId), stateText(i), humanSize(i.criSize), humanSize(i.exclusiveBytes), i.lastChangedAt ?? '-']),
      STORE_COLUMNS,
    ),
  );
  const f = p.forecast;
  out.push(`\nGC forecast — when the image file system reaches ${f.highPercent} %, kubelet deletes (oldest first):`);
  if (f.steps.length === 0) out.push(`  nothing: every image is in use or pinned for kubelet${losing ? ` (${losing} only until the next k3s start)` : ''}.`);
  f.steps.forEach((st, n) => {
    const mark = st.deleted ? `${n + 1}.` : ' -';
    const name = screen.ref(imageName(st.refs, st.key), mark.length + 40);
    out.push(`  ${mark} ${name}  frees ${humanSize(st.frees)}${st.deleted ? '' : '  (only at eviction)'}${st.needed.length ? '  NEEDED' : ''}`);
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
  if (f.neededDeleted) out.push(`  WARNING: ${f.neededDeleted} needed image${f.neededDeleted === 1 ? ' is' : 's are'} among them — pin ${f.neededDeleted === 1 ? 'it' : 'them'} (holdfast pin ${p.node} ${siteNeeds ? '--needed' : 'REF'}) before the disk fills.`);
  out.push(`  Order: ${brief ? ORDER_BRIEF : f.orderNote}`);
  for (const n of f.notes) out.push(`  note: ${n}`);
  if (brief) out.push(whyHint());
  // Tables fit already; the prose lines around them are wrapped to the terminal.
  return screen.text(out.join('\n'));
}

/**
 * The references an image's line lists: all of them, or on a terminal (`screen`) the other ones
 * elided, each on a line of its own under the image.
 */
function refLines(refs: readonly string[], shown: string, screen: Screen): string {
  if (!screen.terminal) return `: ${refs.join(', ')}`;
  const others = refs.filter((r) => r !== shown);
  return others.length ? `\n${others.map((r) => `      ${screen.ref(r, 6)}`).join('\n')}` : '';
}

/**
 * The plan's lines; the same `remove` lines (with "would") are what the real run prints. On a
 * terminal, fitted to it, and why each kept image stays in one short clause (its sentence with `why`).
 */
export function planText(plan: PrunePlan, screen: Screen = Screen.plain, why = false): string {
  const out: string[] = [];
  for (const r of plan.remove) {
    const name = imageName(r.refs, r.key);
    out.push(`  would remove ${screen.ref(name, 40)} (${shortDigest(r.imageId)}, frees ${humanSize(r.bytes)})${refLines(r.refs, name, screen)}`);
  }
  for (const k of plan.kept) out.push(`  keep ${screen.ref(imageName(k.refs, k.key), 30)}: ${screen.terminal && !why ? PRUNE_KEEP_BRIEF[k.reason] : k.text}`);
  return screen.text(out.join('\n'));
}

export function resultText(res: PruneResult, screen: Screen = Screen.plain): string {
  const out: string[] = [];
  for (const r of res.removed) {
    const name = imageName(r.refs, r.key);
    out.push(`  removed ${screen.ref(name, 40)} (${shortDigest(r.imageId)}, frees ${humanSize(r.bytes)})${refLines(r.refs, name, screen)}`);
  }
  for (const r of res.refused) out.push(`  left ${screen.ref(imageName(r.refs, r.key), 30)}: ${r.text}`);
  for (const r of res.failed) out.push(`  FAILED ${screen.ref(imageName(r.refs, r.key), 30)}: ${r.error}${r.deletedRefs.length ? ` (already deleted: ${r.deletedRefs.join(', ')})` : ''}`);
  return screen.text(out.join('\n'));
}

export function registerDiskCommands(program: Command, cli: Cli): void {
  program
    .command('disk')
    .summary("a node's disk and what kubelet's GC deletes first")
    .description("A node's disk: its file systems, kubelet's image GC thresholds, the image store by image, and what GC would delete first when the disk fills.")
    .argument('<node>', 'the node to look at')
    .hook('preAction', connectsFirstNode(cli))
    .option('--json', 'machine-readable output')
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
          "The GC thresholds are the node's kubelet arguments (its k3s or RKE2 config.yaml, command line), else kubelet's and k3s's defaults (85 % / 80 %, eviction at 5 % free); each says where it came from.",
        ],
      ),
    )
    .action(async (name: string, o) => {
      const p = await cli.call('disk.picture', { node: name });
      if (o.json) return cli.io.out(JSON.stringify(p, null, 2));
      cli.io.out(diskText(p, cli.screen(), o.why === true));
    });

  program
    .command('prune')
    .summary('remove unused, unprotected images (never unpins)')
    .description(
      'Remove the images no container uses and no pin protects, keeping the newest versions of every repository in use (for a rollback). Never unpins; never removes an image the site needs.',
    )
    .argument('[nodes...]', 'nodes to prune (or --all, or --group)')
    .option('--all', 'every configured node')
    .option('--group <group>', 'the nodes of one group')
    .option('--keep-versions <n>', 'newest versions kept per repository in use', keepVersions, DEFAULT_KEEP_VERSIONS)
    .option('--dry-run', 'show exactly what would be removed, remove nothing')
    .option('--json', 'machine-readable output')
    .option('--why', 'why each image is kept, in full')
    .addHelpText(
      'after',
      helpAfter(
        ['holdfast prune lab1-n1 --dry-run --why', 'holdfast prune lab1-n1', 'holdfast prune --group lab1 --keep-versions 3 --dry-run', 'holdfast prune --all'],
        ['The dry run lists exactly what the real run removes. Naming the nodes (or --all, --group) is the confirmation: nothing is asked.', FITTED_NOTE],
      ),
    )
    .action(async (names: string[], o) => {
      if (!names.length && !o.all && !o.group) throw new HoldfastError('INVALID_INPUT', 'name the nodes to prune, or give --all or --group G');
      const { selectNodes } = await import('./fleet');
      const defs = await selectNodes(cli, names, o);
      const keep = o.keepVersions as number;
      // As in the app: the plan, then removing what it previews. Naming the nodes on the command
      // line is the confirmation the service asks for (the app has the node's name typed).
      const apply = async (node: string): Promise<PruneResult> => {
        const plan = await cli.call('prune.plan', { node, keepVersions: keep });
        if (plan.remove.length === 0) return { node, keepVersions: keep, removed: [], refused: [], failed: [], plannedBytes: 0, freedBytes: 0, audit: null };
        return cli.call('prune.apply', { node, keepVersions: keep, images: plan.remove.map((r) => r.key), confirm: node });
      };
      type Outcome = { node: string; ok: true; plan?: PrunePlan; result?: PruneResult } | { node: string; ok: false; error: { code: string; message: string } };
      const outcomes = await mapLimit(defs, 4, async (d): Promise<Outcome> => {
        try {
          return o.dryRun
            ? { node: d.name, ok: true, plan: await cli.call('prune.plan', { node: d.name, keepVersions: keep }) }
            : { node: d.name, ok: true, result: await apply(d.name) };
        } catch (e) {
          const err = e instanceof HoldfastError ? { code: e.code, message: e.message } : { code: 'INTERNAL', message: e instanceof Error ? e.message : String(e) };
          return { node: d.name, ok: false, error: err };
        }
      });
      const screen = cli.screen();
      const why = o.why === true;
      if (o.json) cli.io.out(JSON.stringify(outcomes, null, 2));
      else {
        for (const r of outcomes) {
          if (!r.ok) continue;
          const body = r.plan ? planText(r.plan, screen, why) : resultText(r.result!, screen);
          cli.io.out(`${r.node}:${body ? `\n${body}` : ' nothing to remove'}`);
        }
        // One line per node, last, so a fleet run reads at a glance.
        for (const r of outcomes) {
          if (!r.ok) cli.io.out(screen.text(`${r.node}: FAILED — ${r.error.message}`));
          else if (r.plan) cli.io.out(screen.text(`${r.node}: would remove ${r.plan.remove.length} of ${r.plan.imagesBefore} images, freeing ${humanSize(r.plan.freedBytes)} (keeping ${r.plan.kept.length}; ${r.plan.keepVersions} newest versions of every repository in use)`));
          else {
            const x = r.result!;
            const extra = [x.refused.length ? `${x.refused.length} left` : '', x.failed.length ? `${x.failed.length} FAILED` : ''].filter(Boolean).join(', ');
            cli.io.out(screen.text(`${r.node}: removed ${x.removed.length} images, ${humanSize(x.freedBytes)} freed${extra ? ` (${extra})` : ''}`));
          }
        }
      }
      if (!o.json && screen.terminal && !why && outcomes.some((r) => r.ok && r.plan?.kept.length)) cli.io.out(whyHint());
      const bad = outcomes.filter((r) => !r.ok || (r.result && r.result.failed.length > 0));
      if (bad.length) throw new HoldfastError('INTERNAL', `prune failed on ${bad.map((b) => b.node).join(', ')}`);
    });
}
