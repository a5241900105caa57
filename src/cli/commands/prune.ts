// holdfast prune — the safe cleanup: only images no container uses, no pin protects and no
// rollback needs; the dry run lists exactly what the real run removes.
import type { Command } from 'commander';
import { HoldfastError } from '../../core/errors';
import { DEFAULT_KEEP_VERSIONS } from '../../shared/imageVersions';
import { MAX_KEEP_VERSIONS, PRUNE_KEEP_BRIEF, type PrunePlan, type PruneResult } from '../../shared/prunePlan';
import type { Cli } from '../context';
import { JSON_HELP, printedAsJson } from '../output';
import { savedNodeHint } from '../accessText';
import { EXIT, exitCodeFor } from '../exit';
import type { ErrorCode } from '../../shared/domain/errors';
import { humanSize, shortDigest } from '../format';
import { Screen, whyHint } from '../screen';
import { FITTED_NOTE, helpAfter } from '../help';
import { cliProse } from '../remedyText';
import { mapLimit } from '../../shared/mapLimit';
import { imageName } from '../../shared/imageReference';
import { selectNodes } from '../nodeSelection';
import { plural } from '../../shared/wording';

/** One node's part of `prune` (and of `prune --json`, an array of them). */
export type PruneOutcome = { node: string; ok: true; plan?: PrunePlan; result?: PruneResult } | { node: string; ok: false; error: { code: ErrorCode; message: string; hint?: string } };

function keepVersions(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > MAX_KEEP_VERSIONS) throw new HoldfastError('INVALID_INPUT', `--keep-versions: "${v}" is not a whole number from 1 to ${MAX_KEEP_VERSIONS}`);
  return n;
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
  for (const k of plan.kept) out.push(`  keep ${screen.ref(imageName(k.refs, k.key), 30)}: ${screen.terminal && !why ? PRUNE_KEEP_BRIEF[k.reason] : cliProse(k.text)}`);
  return screen.text(out.join('\n'));
}

export function resultText(res: PruneResult, screen: Screen = Screen.plain): string {
  const out: string[] = [];
  for (const r of res.removed) {
    const name = imageName(r.refs, r.key);
    out.push(`  removed ${screen.ref(name, 40)} (${shortDigest(r.imageId)}, frees ${humanSize(r.bytes)})${refLines(r.refs, name, screen)}`);
  }
  for (const r of res.refused) out.push(`  left ${screen.ref(imageName(r.refs, r.key), 30)}: ${cliProse(r.text)}`);
  for (const r of res.failed) out.push(`  FAILED ${screen.ref(imageName(r.refs, r.key), 30)}: ${r.error}${r.deletedRefs.length ? ` (already deleted: ${r.deletedRefs.join(', ')})` : ''}`);
  return screen.text(out.join('\n'));
}

/** An outcome as `prune --json` gives it: every kept or left image's remedies worded as commands (cli/remedyText). */
function outcomeInWords(o: PruneOutcome): PruneOutcome {
  if (!o.ok) return o;
  const plan = o.plan && { ...o.plan, kept: o.plan.kept.map((k) => ({ ...k, text: cliProse(k.text) })) };
  const result = o.result && { ...o.result, refused: o.result.refused.map((r) => ({ ...r, text: cliProse(r.text) })) };
  return { ...o, ...(plan ? { plan } : {}), ...(result ? { result } : {}) };
}

export function registerPruneCommand(program: Command, cli: Cli): void {
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
    .option('--json', JSON_HELP)
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
      const defs = await selectNodes(cli, names, o);
      const keep = o.keepVersions as number;
      // As in the app: the plan, then removing what it previews. Naming the nodes on the command
      // line is the confirmation the service asks for (the app has the node's name typed).
      const apply = async (node: string): Promise<PruneResult> => {
        const plan = await cli.call('prune.plan', { node, keepVersions: keep });
        if (plan.remove.length === 0) return { node, keepVersions: keep, removed: [], refused: [], failed: [], plannedBytes: 0, freedBytes: 0, audit: null };
        return cli.call('prune.apply', { node, keepVersions: keep, images: plan.remove.map((r) => r.key), confirm: node });
      };
      const outcomes = await mapLimit(defs, 4, async (d): Promise<PruneOutcome> => {
        try {
          return o.dryRun
            ? { node: d.name, ok: true, plan: await cli.call('prune.plan', { node: d.name, keepVersions: keep }) }
            : { node: d.name, ok: true, result: await apply(d.name) };
        } catch (e) {
          // A refusal's remedy (a host key to trust) worded as the command that works here.
          const hint = e instanceof HoldfastError ? savedNodeHint(e) : undefined;
          const err = e instanceof HoldfastError ? { code: e.code, message: e.message, ...(hint ? { hint } : {}) } : { code: 'INTERNAL' as const, message: e instanceof Error ? e.message : String(e) };
          return { node: d.name, ok: false, error: err };
        }
      });
      const screen = cli.screen();
      const why = o.why === true;
      if (!printedAsJson(cli, outcomes.map(outcomeInWords))) {
        for (const r of outcomes) {
          if (!r.ok) continue;
          const body = r.plan ? planText(r.plan, screen, why) : resultText(r.result!, screen);
          if (body) cli.io.out(`${r.node}:\n${body}`);
        }
        // One line per node, last, so a fleet run reads at a glance.
        for (const r of outcomes) {
          if (!r.ok) cli.io.out(screen.text(`${r.node}: FAILED — ${r.error.message}${r.error.hint ? ` ${r.error.hint}` : ''}`));
          else if (r.plan) cli.io.out(screen.text(`${r.node}: would remove ${r.plan.remove.length} of ${r.plan.imagesBefore} images, freeing ${humanSize(r.plan.freedBytes)} (keeping ${r.plan.kept.length}; ${r.plan.keepVersions} newest versions of every repository in use)`));
          else {
            const x = r.result!;
            const extra = [x.refused.length ? `${x.refused.length} left` : '', x.failed.length ? `${x.failed.length} FAILED` : ''].filter(Boolean).join(', ');
            const nothing = x.removed.length + x.refused.length + x.failed.length === 0;
            cli.io.out(screen.text(nothing ? `${r.node}: nothing to remove` : `${r.node}: removed ${plural(x.removed.length, 'image')}, ${humanSize(x.freedBytes)} freed${extra ? ` (${extra})` : ''}`));
          }
        }
      }
      if (cli.output !== 'json' && screen.terminal && !why && outcomes.some((r) => r.ok && r.plan?.kept.length)) cli.io.out(whyHint());
      const bad = outcomes.filter((r) => !r.ok || (r.result && r.result.failed.length > 0));
      // Refused on every failed node (a changed or unknown host key, a safety check): exit 3, as
      // every command says a refusal; any other failure among them: 1.
      const refused = bad.filter((r) => !r.ok && exitCodeFor(r.error.code) === EXIT.REFUSED);
      if (bad.length) throw new HoldfastError(refused.length === bad.length ? 'REFUSED' : 'INTERNAL', `prune failed on ${bad.map((b) => b.node).join(', ')}`);
    });
}
