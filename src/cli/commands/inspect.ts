// holdfast images | archives — what is on a node and what happens to it at the next k3s start.
import type { Command } from 'commander';
import type { ImageRef, LostPin } from '../../shared/domain';
import { atRiskOf, NEED_VERDICT_TEXT, type NeedsReport } from '../../shared/needs';
import { LOST_PIN_KIND_TEXT, pinnedByText } from '../../shared/lostPins';
import { nodeWarnings } from '../../shared/nodeWarnings';
import { plural, word } from '../../shared/wording';
import { imageProtection, losingOf, protectionKey, refOutcome } from '../../shared/protection';
import { criPinning } from '../../shared/versions';
import { connectsFirstNode, type Cli } from '../context';
import { humanSize, shortDigest, table, terminalSafe as safe } from '../format';

/** The lost pins of one node as text: which pin, when Holdfast made it, why it is likely gone, what to do. */
export function lostPinsText(lost: readonly LostPin[], indent = '  '): string {
  const out: string[] = [];
  for (const l of lost) {
    // Names, paths and causes come from the node: each shown on its own line, harmless.
    out.push(`${indent}${safe(l.ref)} — ${LOST_PIN_KIND_TEXT[l.kind]} (${safe(pinnedByText(l))})`);
    out.push(`${indent}  ${safe(l.summary)}`);
    out.push(`${indent}  likely: ${l.causes.map((c) => safe(c)).join(`\n${indent}          `)}`);
    out.push(`${indent}  remedy: ${safe(l.remedy.text)}${l.remedy.command ? `\n${indent}          ${safe(l.remedy.command)}` : ''}`);
  }
  return out.join('\n');
}

const lostLine = (n: number) => `${plural(n, 'durable pin')} Holdfast made ${word(n, 'is')} gone`;

/**
 * What the site needs, as the images table's footer says it: where the needs come from (or why
 * there is no source), every needed image at risk with the workloads that need it, and the one
 * command that protects them (shared/needs).
 */
function printNeeds(cli: Cli, node: string, images: ImageRef[], needs: NeedsReport): void {
  const from = needs.sources.map((s) => s.label).join(', ');
  cli.io.out(
    needs.basis === 'known'
      ? `Site needs from: ${safe(from)}`
      : `No source of site needs (${safe(needs.noSource ?? 'none read')}): images from air-gap archives count as needed.${from ? ` Also read: ${safe(from)}.` : ''}`,
  );
  for (const n of needs.notes) cli.io.err(`note: ${node}: ${safe(n)}`);
  const atRisk = atRiskOf(images, needs);
  if (atRisk.length === 0) {
    cli.io.out('No needed image is at risk: every pod the site needs can start here.');
    return;
  }
  cli.io.out(`${atRisk.length} needed image${atRisk.length === 1 ? '' : 's'} AT RISK (a pod that needs ${atRisk.length === 1 ? 'it' : 'them'} may fail to start):`);
  for (const a of atRisk) {
    const held = a.heldBy?.length ? ` (copy: ${a.heldBy.join(', ')})` : '';
    cli.io.out(`  ${safe(a.refs.find((r) => !r.startsWith('sha256:')) ?? a.refs[0]!)}: ${safe(a.because)}${safe(held)}`);
  }
  if (atRisk.some((a) => a.pinnable)) cli.io.out(`Make every needed image durable with: holdfast pin ${node} --needed`);
  else if (atRisk.some((a) => a.verdict !== 'missing')) cli.io.out("Their pins are durable, but kubelet does not see them on this containerd: keep their archives in the images dir.");
  if (atRisk.some((a) => a.verdict === 'missing')) cli.io.out(`Bring a missing image back with: holdfast import ${node} ARCHIVE`);
}

export function registerInspectCommands(program: Command, cli: Cli): void {
  program
    .command('images')
    .description('every image reference on a node: pin state and fate at the next k3s start')
    .argument('<node>')
    .hook('preAction', connectsFirstNode(cli))
    .option('--json', 'machine-readable output')
    .option('--lost', "only the durable pins Holdfast made that are gone (with --json: an array of lost pins)")
    .action(async (name: string, o) => {
      // --json stays an array of references (scripts parse it); a reference whose pin is lost carries `lostPin`.
      const { images, lost, info, needs } = await cli.call('images.report', { node: name });
      if (o.lost) {
        if (o.json) return cli.io.out(JSON.stringify(lost, null, 2));
        return cli.io.out(lost.length ? `${lostLine(lost.length)} on ${name}:\n${lostPinsText(lost)}` : `no durable pin Holdfast made on ${name} is lost`);
      }
      if (o.json) return cli.io.out(JSON.stringify(images, null, 2));
      // What the node runs may make every pin moot: said once, before the table.
      for (const w of nodeWarnings(info)) cli.io.err(`warning: ${name}: ${safe(w.message)}`);
      if (images.length === 0) {
        const def = (await cli.call('nodes.list', {})).find((d) => d.name === name);
        cli.io.out(`no images in namespace ${def?.namespace ?? 'k8s.io'} on ${name}`);
        printNeeds(cli, name, images, needs);
        if (lost.length) cli.io.out(`\n${lostLine(lost.length)}:\n${lostPinsText(lost)}`);
        return;
      }
      // One verdict per image, as kubelet sees it (shared/protection); references are the detail.
      const protection = imageProtection(images, criPinning(info.containerdVersion));
      const OUTCOME = { pinned: 'pinned', unpinned: 'unpinned', 'loses-pin': 'LOSES PIN', 'own-pin-goes': 'unpinned (image kept)' } as const;
      cli.io.out(
        table(
          ['REFERENCE', 'PIN', 'AFTER RESTART', 'SITE NEED', 'IMAGE ID', 'SIZE', 'PLATFORMS'],
          images.map((i) => [
            i.name,
            i.lostPin ? `${i.pin} (PIN LOST)` : i.pin,
            OUTCOME[refOutcome(i, protection.get(protectionKey(i))!)],
            i.need ? (i.need.atRisk ? NEED_VERDICT_TEXT[i.need.verdict].toUpperCase() : NEED_VERDICT_TEXT[i.need.verdict]) : '-',
            shortDigest(i.imageId),
            humanSize(i.size),
            i.platforms.join(',') || '-',
          ]),
        ),
      );
      const counts = { durable: 0, k3s: 0, none: 0 };
      for (const i of images) counts[i.pin]++;
      cli.io.out(`\n${images.length} references of ${protection.size} images: ${counts.durable} durable, ${counts.k3s} k3s-pinned, ${counts.none} unpinned`);
      printNeeds(cli, name, images, needs);
      const atRisk = losingOf(protection).filter((p) => !images.some((i) => i.need?.atRisk && protectionKey(i) === p.key));
      if (atRisk.length) {
        cli.io.out(`${atRisk.length} image${atRisk.length === 1 ? '' : 's'} will lose ${atRisk.length === 1 ? 'its' : 'their'} pin at the next k3s start (as kubelet sees ${atRisk.length === 1 ? 'it' : 'them'}):`);
        for (const p of atRisk) cli.io.out(`  ${safe(p.refs.join(', '))}: ${safe(p.reason)}`);
        cli.io.out(`Make them durable with: holdfast pin ${name} --all-k3s`);
      }
      if (lost.length) cli.io.out(`\n${lostLine(lost.length)}:\n${lostPinsText(lost)}`);
    });

  program
    .command('archives')
    .description("the files in a node's images dir: what each archive brings and whether it can be removed safely")
    .argument('<node>')
    .hook('preAction', connectsFirstNode(cli))
    .option('--json', 'machine-readable output')
    .action(async (name: string, o) => {
      const archives = await cli.call('archives.list', { node: name });
      if (o.json) return cli.io.out(JSON.stringify(archives, null, 2));
      if (archives.length === 0) return cli.io.out(`the images dir of ${name} is empty`);
      cli.io.out(
        table(
          ['PATH', 'KIND', 'SIZE', 'IMAGES', 'IMPORTED', 'SAFE TO REMOVE'],
          archives.map((a) => [
            a.path + (a.cachedByK3s ? ' (cached by k3s)' : ''),
            a.kind,
            humanSize(a.size),
            a.error ? `unreadable: ${a.error}` : a.images.length ? a.images : '-',
            a.kind === 'archive' ? (a.imported ? 'yes' : 'no') : '-',
            a.kind === 'archive' ? (a.safeToRemove ? 'yes' : 'no') : '-',
          ]),
        ),
      );
      for (const a of archives.filter((x) => x.kind === 'archive' && !x.safeToRemove)) cli.io.out(`\n${safe(a.path)}: ${safe(a.reason)}`);
    });
}
