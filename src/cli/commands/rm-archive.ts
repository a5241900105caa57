// holdfast rm-archive — remove an archive from the images dir, only when it is safe.
import type { Command } from 'commander';
import { inImagesDir } from '../../core/archives/imagesDirPath';
import { HoldfastError } from '../../core/errors';
import { connectsFirstNode, type Cli } from '../context';
import { humanSize, terminalSafe as safe } from '../format';
import { helpAfter } from '../help';
import { cliProse } from '../remedyText';
import { removalVerdict } from '../../shared/removalVerdict';

export function registerRmArchiveCommand(program: Command, cli: Cli): void {
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
      // What the removal sets off without blocking it (RKE2's own image lists: shared/rke2Lists).
      const warn = (warnings: readonly string[] | undefined) => {
        for (const w of warnings ?? []) cli.io.out(cli.screen().text(`\nwarning: ${safe(w)}`));
      };
      // An absolute path inside the node's images dir names the same file as its relative path.
      const p = given.startsWith('/') ? inImagesDir((await cli.store().get(name)).imagesDir, given, name) : given;
      if (o.dryRun) {
        const check = await cli.call('archives.check', { node: name, path: p });
        // The verdict's words and tone are the app's (shared/removalVerdict): never "safely" beside a warning.
        const verdict = removalVerdict(check);
        cli.io.out(cli.screen().text(`${safe(p)} ${verdict.clause}${check.allowed ? '' : `:\n  ${check.problems.map((x) => safe(cliProse(x))).join('\n  ')}`}`));
        warn(check.warnings);
        if (!check.allowed) throw new HoldfastError('REFUSED', `${p} is not safe to remove`);
        return;
      }
      // Forcing needs the path typed again as confirmation: on the command line, the path given is it.
      const entry = await cli.call('archives.remove', { node: name, path: p, ...(o.force ? { force: true, confirm: p } : {}) });
      cli.io.out(cli.screen().text(`removed ${safe(p)} (${humanSize(entry.archive!.size)}, sha256 ${entry.archive!.sha256})${entry.forced ? ' — FORCED, logged' : ''}`));
      warn(entry.warnings);
    });
}
