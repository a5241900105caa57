// holdfast disk | prune — what a node's image store holds, what kubelet's image GC would delete
// when the disk fills, and the safe cleanup (only images no container uses, no pin protects and
// no rollback needs; the dry run lists exactly what the real run removes).
import type { Command } from 'commander';
import { HoldfastError } from '../../core/errors';
import type { DiskPicture } from '../../shared/diskPicture';
import { FS_ROLE_TEXT } from '../../shared/diskPicture';
import { evictionAtPercent, formatThreshold, kubeletUsagePercent } from '../../shared/gcPolicy';
import { DEFAULT_KEEP_VERSIONS } from '../../shared/imageVersions';
import { MAX_KEEP_VERSIONS, type PrunePlan, type PruneResult } from '../../shared/prunePlan';
import { connectsFirstNode, type Cli } from '../context';
import { humanSize, shortDigest, table } from '../format';
import { mapLimit } from '../../shared/mapLimit';
import { imageName } from '../../shared/reference';

function keepVersions(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > MAX_KEEP_VERSIONS) throw new HoldfastError('INVALID_INPUT', `--keep-versions: "${v}" is not a whole number from 1 to ${MAX_KEEP_VERSIONS}`);
  return n;
}

const pct = (n: number | null) => (n === null ? '-' : `${n} %`);
const STATE_TEXT = { 'in-use': 'in use', durable: 'durable pin', k3s: 'k3s pin', unprotected: 'unprotected' } as const;

/** The picture as text: file systems, thresholds, the store, the forecast with its needed flags. */
export function diskText(p: DiskPicture): string {
  const out: string[] = [];
  out.push(
    table(
      ['FILE SYSTEM OF', 'HOLDS', 'SIZE', 'FREE', 'USED'],
      p.fileSystems.map((f) => [
        Object.values(f.paths)[0] ?? '-',
        f.roles.map((r) => FS_ROLE_TEXT[r]).join(', '),
        f.totalBytes === null ? '?' : humanSize(f.totalBytes),
        humanSize(f.freeBytes),
        pct(kubeletUsagePercent(f)),
      ]),
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
  if (!p.images || !p.summary || !p.forecast) return out.join('\n');
  const s = p.summary;
  out.push(
    `\nImage store: ${s.images} images, ${humanSize(s.storeBytes)} of content — ${s.inUse} in use, ${s.durable} pinned durably, ${s.k3s} pinned by k3s, ${s.unprotected} unprotected (removing them would free ${humanSize(s.unprotectedBytes)}).`,
  );
  out.push(
    table(
      ['IMAGE', 'ID', 'STATE', 'CRI SIZE', 'FREES ALONE', 'LAST CHANGED'],
      p.images.map((i) => [imageName(i.refs, i.key), shortDigest(i.imageId), STATE_TEXT[i.state], humanSize(i.criSize), humanSize(i.exclusiveBytes), i.lastChangedAt ?? '-']),
    ),
  );
  const f = p.forecast;
  out.push(`\nGC forecast — when the image file system reaches ${f.highPercent} %, kubelet deletes (oldest first):`);
  if (f.steps.length === 0) out.push('  nothing: every image is in use or pinned for kubelet.');
  f.steps.forEach((st, n) => {
    const name = imageName(st.refs, st.key);
    const mark = st.deleted ? `${n + 1}.` : ' -';
    out.push(`  ${mark} ${name}  frees ${humanSize(st.frees)}${st.deleted ? '' : '  (only at eviction)'}${st.needed.length ? '  NEEDED' : ''}`);
    for (const nf of st.needed) out.push(`       ! ${nf.text}`);
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
  out.push(`  Order: ${f.orderNote}`);
  for (const n of f.notes) out.push(`  note: ${n}`);
  return out.join('\n');
}

/** The plan's lines; the same `remove` lines (with "would") are what the real run prints. */
export function planText(plan: PrunePlan): string {
  const out: string[] = [];
  for (const r of plan.remove) out.push(`  would remove ${imageName(r.refs, r.key)} (${shortDigest(r.imageId)}, frees ${humanSize(r.bytes)}): ${r.refs.join(', ')}`);
  for (const k of plan.kept) out.push(`  keep ${imageName(k.refs, k.key)}: ${k.text}`);
  return out.join('\n');
}

export function resultText(res: PruneResult): string {
  const out: string[] = [];
  for (const r of res.removed) out.push(`  removed ${imageName(r.refs, r.key)} (${shortDigest(r.imageId)}, frees ${humanSize(r.bytes)}): ${r.refs.join(', ')}`);
  for (const r of res.refused) out.push(`  left ${imageName(r.refs, r.key)}: ${r.text}`);
  for (const r of res.failed) out.push(`  FAILED ${imageName(r.refs, r.key)}: ${r.error}${r.deletedRefs.length ? ` (already deleted: ${r.deletedRefs.join(', ')})` : ''}`);
  return out.join('\n');
}

export function registerDiskCommands(program: Command, cli: Cli): void {
  program
    .command('disk')
    .description("a node's disk: file systems, kubelet's GC thresholds, the image store by image, and what GC would delete first")
    .argument('<node>')
    .hook('preAction', connectsFirstNode(cli))
    .option('--json', 'machine-readable output')
    .action(async (name: string, o) => {
      const p = await cli.call('disk.picture', { node: name });
      if (o.json) return cli.io.out(JSON.stringify(p, null, 2));
      cli.io.out(diskText(p));
    });

  program
    .command('prune')
    .description('remove images no container uses and no pin protects, keeping the newest versions of every repository in use; never unpins')
    .argument('[nodes...]')
    .option('--all', 'every configured node')
    .option('--group <group>', 'the nodes of one group')
    .option('--keep-versions <n>', 'newest versions kept of every repository in use', keepVersions, DEFAULT_KEEP_VERSIONS)
    .option('--dry-run', 'show exactly what would be removed, remove nothing')
    .option('--json', 'machine-readable output')
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
      if (o.json) cli.io.out(JSON.stringify(outcomes, null, 2));
      else {
        for (const r of outcomes) {
          if (!r.ok) continue;
          const body = r.plan ? planText(r.plan) : resultText(r.result!);
          cli.io.out(`${r.node}:${body ? `\n${body}` : ' nothing to remove'}`);
        }
        // One line per node, last, so a fleet run reads at a glance.
        for (const r of outcomes) {
          if (!r.ok) cli.io.out(`${r.node}: FAILED — ${r.error.message}`);
          else if (r.plan) cli.io.out(`${r.node}: would remove ${r.plan.remove.length} of ${r.plan.imagesBefore} images, freeing ${humanSize(r.plan.freedBytes)} (keeping ${r.plan.kept.length}; ${r.plan.keepVersions} newest versions of every repository in use)`);
          else {
            const x = r.result!;
            const extra = [x.refused.length ? `${x.refused.length} left` : '', x.failed.length ? `${x.failed.length} FAILED` : ''].filter(Boolean).join(', ');
            cli.io.out(`${r.node}: removed ${x.removed.length} images, ${humanSize(x.freedBytes)} freed${extra ? ` (${extra})` : ''}`);
          }
        }
      }
      const bad = outcomes.filter((r) => !r.ok || (r.result && r.result.failed.length > 0));
      if (bad.length) throw new HoldfastError('INTERNAL', `prune failed on ${bad.map((b) => b.node).join(', ')}`);
    });
}
