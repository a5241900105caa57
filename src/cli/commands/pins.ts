// holdfast pin | unpin | rm-archive — the changes Holdfast makes, previewed with --dry-run.
import type { Command } from 'commander';
import { HoldfastError } from '../../core/errors';
import type { ArgsOf } from '../../shared/contract';
import type { PinPlan } from '../../shared/domain';
import { pinNotHonoured } from '../../shared/nodeWarnings';
import { connectsFirstNode, describeChange, type Cli } from '../context';
import { humanSize, terminalSafe as safe } from '../format';
import { logger } from '../../core/log';

const log = logger('cli');

type PinTarget = ArgsOf<'pins.plan'>['target'];

export function registerPinCommands(program: Command, cli: Cli): void {
  const printPlan = (plan: PinPlan, applied: boolean) => {
    const verb = plan.action === 'pin' ? 'made durable' : 'released';
    if (plan.changes.length === 0) cli.io.out('nothing to change');
    for (const c of plan.changes) cli.io.out(`${applied ? verb : 'would be ' + verb}: ${safe(c.ref)}\n${describeChange(c)}`);
    for (const u of plan.unchanged) cli.io.out(`unchanged: ${safe(u.ref)} (${safe(u.reason)})`);
  };

  program
    .command('pin')
    .description('make pins durable: set io.cri-containerd.pinned and remove the k3s label on every reference of each image')
    .argument('<node>')
    .argument('[refs...]', 'image references to pin (every reference of the same image is pinned too)')
    .hook('preAction', connectsFirstNode(cli))
    .option('--archive <path>', 'the images an archive in the images dir brings (path relative to the images dir)')
    .option('--all-k3s', 'every image k3s has pinned')
    .option('--needed', "every image the site needs (its workloads, the operator's list, the sandbox image) that is on the node")
    .option('--dry-run', 'show what would change, change nothing')
    .option('--json', 'machine-readable output')
    .action(async (name: string, refs: string[], o) => {
      const given = [refs.length > 0, Boolean(o.archive), Boolean(o.allK3s), Boolean(o.needed)].filter(Boolean).length;
      if (given !== 1) throw new HoldfastError('INVALID_INPUT', 'name references, or give --archive PATH, --all-k3s or --needed (exactly one of them)');
      const target: PinTarget = refs.length ? { refs } : o.archive ? { archive: o.archive } : o.needed ? { needed: true } : { allK3s: true };
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
    .description('release durable pins Holdfast (or anyone) set: kubelet may then garbage-collect the image')
    .argument('<node>')
    .argument('<refs...>')
    .hook('preAction', connectsFirstNode(cli))
    .option('--dry-run', 'show what would change, change nothing')
    .option('--json', 'machine-readable output')
    .action(async (name: string, refs: string[], o) => {
      const target: PinTarget = { refs };
      const plan = await cli.call(o.dryRun ? 'pins.plan' : 'pins.apply', { node: name, action: 'unpin', target });
      if (o.json) return cli.io.out(JSON.stringify(plan, null, 2));
      printPlan(plan, !o.dryRun);
    });

  program
    .command('rm-archive')
    .description('remove an archive from the images dir, only if every image it brings is complete and durably pinned')
    .argument('<node>')
    .argument('<path>', 'path relative to the images dir')
    .hook('preAction', connectsFirstNode(cli))
    .option('--force', 'remove even if the check fails (logged)')
    .option('--dry-run', 'run the check only')
    .action(async (name: string, p: string, o) => {
      if (o.dryRun) {
        const check = await cli.call('archives.check', { node: name, path: p });
        cli.io.out(check.allowed ? `${safe(p)} can be removed safely` : `${safe(p)} cannot be removed safely:\n  ${check.problems.map((x) => safe(x)).join('\n  ')}`);
        if (!check.allowed) throw new HoldfastError('REFUSED', `${p} is not safe to remove`);
        return;
      }
      // Forcing needs the path typed again as confirmation: on the command line, the path given is it.
      const entry = await cli.call('archives.remove', { node: name, path: p, ...(o.force ? { force: true, confirm: p } : {}) });
      cli.io.out(`removed ${safe(p)} (${humanSize(entry.archive!.size)}, sha256 ${entry.archive!.sha256})${entry.forced ? ' — FORCED, logged' : ''}`);
    });
}
