// holdfast images | archives — what is on a node and what happens to it at the next k3s start.
import type { Command } from 'commander';
import { inventory } from '../../core/node/operations';
import type { Cli } from '../context';
import { humanSize, shortDigest, table } from '../format';

export function registerInspectCommands(program: Command, cli: Cli): void {
  program
    .command('images')
    .description('every image reference on a node: pin state and fate at the next k3s start')
    .argument('<node>')
    .option('--json', 'machine-readable output')
    .action(async (name: string, o) => {
      const inv = await cli.onNode(name, (s, ctx) => inventory(s, ctx));
      const images = inv.images;
      if (o.json) return cli.io.out(JSON.stringify(images, null, 2));
      if (images.length === 0) return cli.io.out(`no images in namespace ${(await cli.store().get(name)).namespace} on ${name}`);
      cli.io.out(
        table(
          ['REFERENCE', 'PIN', 'AFTER RESTART', 'IMAGE ID', 'SIZE', 'PLATFORMS'],
          images.map((i) => [
            i.name,
            i.pin,
            i.afterRestart === 'unpinned' && i.pin !== 'none' ? 'LOSES PIN' : i.afterRestart,
            shortDigest(i.imageId),
            humanSize(i.size),
            i.platforms.join(',') || '-',
          ]),
        ),
      );
      const counts = { durable: 0, k3s: 0, none: 0 };
      for (const i of images) counts[i.pin]++;
      cli.io.out(`\n${images.length} references: ${counts.durable} durable, ${counts.k3s} k3s-pinned, ${counts.none} unpinned`);
      const atRisk = images.filter((i) => i.pin !== 'none' && i.afterRestart === 'unpinned');
      if (atRisk.length) {
        cli.io.out(`${atRisk.length} will lose their pin at the next k3s start:`);
        for (const i of atRisk) cli.io.out(`  ${i.name}: ${i.reason}`);
        cli.io.out(`Make them durable with: holdfast pin ${name} --all-k3s`);
      }
    });

  program
    .command('archives')
    .description("the files in a node's images dir: what each archive brings and whether it can be removed safely")
    .argument('<node>')
    .option('--json', 'machine-readable output')
    .action(async (name: string, o) => {
      const inv = await cli.onNode(name, (s, ctx) => inventory(s, ctx));
      if (o.json) return cli.io.out(JSON.stringify(inv.archives, null, 2));
      if (inv.archives.length === 0) return cli.io.out(`the images dir of ${name} is empty`);
      cli.io.out(
        table(
          ['PATH', 'KIND', 'SIZE', 'IMAGES', 'IMPORTED', 'SAFE TO REMOVE'],
          inv.archives.map((a) => [
            a.path + (a.cachedByK3s ? ' (cached by k3s)' : ''),
            a.kind,
            humanSize(a.size),
            a.error ? `unreadable: ${a.error}` : a.images.join('\n') || '-',
            a.kind === 'archive' ? (a.imported ? 'yes' : 'no') : '-',
            a.kind === 'archive' ? (a.safeToRemove ? 'yes' : 'no') : '-',
          ]),
        ),
      );
      for (const a of inv.archives.filter((x) => x.kind === 'archive' && !x.safeToRemove)) cli.io.out(`\n${a.path}: ${a.reason}`);
    });
}
