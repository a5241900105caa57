// holdfast pin — make pins durable, previewed with --dry-run.
import type { Command } from 'commander';
import { inImagesDir } from '../../core/archives/imagesDirPath';
import { HoldfastError } from '../../core/errors';
import { pinNotHonoured } from '../../shared/nodeWarnings';
import { connectsFirstNode, type Cli } from '../context';
import { JSON_HELP, printedAsJson } from '../output';
import { helpAfter } from '../help';
import { logger } from '../../core/log';
import type { PinTarget } from '../../shared/domain/pins';
import { printPlan } from '../pinPlan';

const log = logger('cli');

export function registerPinCommand(program: Command, cli: Cli): void {
  program
    .command('pin')
    .summary('make pins durable, so they survive k3s starts')
    .description(
      'Make pins durable: set io.cri-containerd.pinned and remove the k3s label on every reference of each image, so no k3s start undoes the pin and kubelet never garbage-collects the image.',
    )
    .argument('<node>', 'the node to pin on')
    .argument('[refs...]', 'image references to pin')
    .hook('preAction', connectsFirstNode(cli))
    .option('--archive <path>', 'the images an archive in the images dir brings')
    .option('--all-k3s', 'every image k3s has pinned')
    .option('--needed', 'every image the site needs that is on the node')
    .option('--dry-run', 'show what would change, change nothing')
    .option('--json', JSON_HELP)
    .addHelpText(
      'after',
      helpAfter(
        [
          'holdfast pin lab1-n1 docker.io/library/nginx:1.27',
          'holdfast pin lab1-n1 docker.io/library/nginx:1.27 docker.io/library/redis:7.4',
          'holdfast pin lab1-n1 --needed --dry-run',
          'holdfast pin lab1-n1 --needed',
          'holdfast pin lab1-n1 --archive holdfast-sample.tar.gz',
          'holdfast pin lab1-n1 --all-k3s',
        ],
        [
          'Give exactly one of: references, --archive, --all-k3s or --needed. Every reference of the same image is pinned too (kubelet sees them as one image).',
          "--archive takes a path relative to the images dir (as `holdfast archives NODE` lists it), or its full path there. --needed: the images the site's workloads, the operator's list and the sandbox image need (see `holdfast images NODE`).",
          'On a containerd that ignores the pin label (before 1.7.3) the pin is set, with a warning: keep the archives in the images dir there.',
        ],
      ),
    )
    .action(async (name: string, refs: string[], o) => {
      const given = [refs.length > 0, Boolean(o.archive), Boolean(o.allK3s), Boolean(o.needed)].filter(Boolean).length;
      if (given !== 1) throw new HoldfastError('INVALID_INPUT', 'name references, or give --archive PATH, --all-k3s or --needed (exactly one of them)');
      // An archive by its full path on the node means the same file as its name in the images dir.
      const archive = o.archive?.startsWith('/') ? inImagesDir((await cli.store().get(name)).imagesDir, o.archive, name) : o.archive;
      const target: PinTarget = refs.length ? { refs } : archive ? { archive } : o.needed ? { needed: true } : { allK3s: true };
      const plan = await cli.call(o.dryRun ? 'pins.plan' : 'pins.apply', { node: name, action: 'pin', target });
      // The same session's versions (detected once): no second connection.
      const info = await cli.call('nodes.info', { node: name }).catch((err: unknown) => (log.debug('node versions unknown; no capability warning', { node: name, err }), null));
      // Allowed (the label is harmless), but the technician must know kubelet ignores it there.
      const ignored = pinNotHonoured(name, info);
      if (ignored) cli.io.err(`warning: ${ignored}`);
      if (printedAsJson(cli, plan)) return;
      printPlan(cli, plan, !o.dryRun);
    });
}
