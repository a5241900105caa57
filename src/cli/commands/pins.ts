// holdfast pin | unpin | rm-archive — the changes Holdfast makes, previewed with --dry-run.
import type { Command } from 'commander';
import { inImagesDir } from '../../core/archives/imagesDirPath';
import { HoldfastError } from '../../core/errors';
import type { ArgsOf } from '../../shared/contract';
import type { PinPlan } from '../../shared/domain';
import { pinNotHonoured } from '../../shared/nodeWarnings';
import { connectsFirstNode, describeChange, type Cli } from '../context';
import { humanSize, terminalSafe as safe } from '../format';
import { helpAfter } from '../help';
import { logger } from '../../core/log';

const log = logger('cli');

type PinTarget = ArgsOf<'pins.plan'>['target'];

export function registerPinCommands(program: Command, cli: Cli): void {
  const printPlan = (plan: PinPlan, applied: boolean) => {
    // On a terminal, fitted to it: references elided in the middle, long lines wrapped.
    const screen = cli.screen();
    const verb = plan.action === 'pin' ? 'made durable' : 'released';
    if (plan.changes.length === 0) cli.io.out('nothing to change');
    for (const c of plan.changes) {
      const head = `${applied ? verb : 'would be ' + verb}: `;
      cli.io.out(screen.text(`${head}${screen.ref(safe(c.ref), head.length)}\n${describeChange(c)}`));
    }
    for (const u of plan.unchanged) cli.io.out(screen.text(`unchanged: ${screen.ref(safe(u.ref), 40)} (${safe(u.reason)})`));
  };

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
    .option('--json', 'machine-readable output')
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
      if (o.json) return cli.io.out(JSON.stringify(plan, null, 2));
      printPlan(plan, !o.dryRun);
    });

  program
    .command('unpin')
    .summary('release durable pins (kubelet may then GC them)')
    .description('Release durable pins Holdfast (or anyone) set: kubelet may then garbage-collect the image when the disk fills.')
    .argument('<node>', 'the node to unpin on')
    .argument('<refs...>', 'image references to release')
    .hook('preAction', connectsFirstNode(cli))
    .option('--dry-run', 'show what would change, change nothing')
    .option('--json', 'machine-readable output')
    .addHelpText('after', helpAfter(['holdfast unpin lab1-n1 docker.io/library/nginx:1.25 --dry-run', 'holdfast unpin lab1-n1 docker.io/library/nginx:1.25']))
    .action(async (name: string, refs: string[], o) => {
      const target: PinTarget = { refs };
      const plan = await cli.call(o.dryRun ? 'pins.plan' : 'pins.apply', { node: name, action: 'unpin', target });
      if (o.json) return cli.io.out(JSON.stringify(plan, null, 2));
      printPlan(plan, !o.dryRun);
    });

  program
    .command('rm-archive')
    .summary('remove an archive from the images dir, if safe')
    .description('Remove an archive from the images dir, only if every image it brings is complete and durably pinned.')
    .argument('<node>', 'the node whose images dir holds it')
    .argument('<path>', 'the archive: its name in the images dir, or its full path there')
    .hook('preAction', connectsFirstNode(cli))
    .option('--force', 'remove even if the check fails (logged)')
    .option('--dry-run', 'run the check only')
    .addHelpText(
      'after',
      helpAfter(
        [
          'holdfast rm-archive lab1-n1 holdfast-sample.tar.gz --dry-run',
          '# Not safe yet? Make what it brings durable first',
          'holdfast pin lab1-n1 --archive holdfast-sample.tar.gz',
          'holdfast rm-archive lab1-n1 holdfast-sample.tar.gz',
        ],
        ['Exits 3 when the check refuses. --force removes it anyway; the audit log (holdfast log) records it as FORCED.'],
      ),
    )
    .action(async (name: string, given: string, o) => {
      // An absolute path inside the node's images dir names the same file as its relative path.
      const p = given.startsWith('/') ? inImagesDir((await cli.store().get(name)).imagesDir, given, name) : given;
      if (o.dryRun) {
        const check = await cli.call('archives.check', { node: name, path: p });
        cli.io.out(cli.screen().text(check.allowed ? `${safe(p)} can be removed safely` : `${safe(p)} cannot be removed safely:\n  ${check.problems.map((x) => safe(x)).join('\n  ')}`));
        if (!check.allowed) throw new HoldfastError('REFUSED', `${p} is not safe to remove`);
        return;
      }
      // Forcing needs the path typed again as confirmation: on the command line, the path given is it.
      const entry = await cli.call('archives.remove', { node: name, path: p, ...(o.force ? { force: true, confirm: p } : {}) });
      cli.io.out(cli.screen().text(`removed ${safe(p)} (${humanSize(entry.archive!.size)}, sha256 ${entry.archive!.sha256})${entry.forced ? ' — FORCED, logged' : ''}`));
    });
}
