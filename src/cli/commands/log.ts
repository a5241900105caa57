// holdfast log — the audit log of every change Holdfast made.
import type { Command } from 'commander';
import { AuditLog } from '../../core/audit/log';
import { holdfastHome } from '../../core/config/home';
import type { Cli } from '../context';
import { describeChange } from '../pinPlan';
import { JSON_HELP, printedAsJson } from '../output';
import { terminalSafe as safe } from '../format';
import { helpAfter } from '../help';
import { plural } from '../../shared/wording';
import { prunedImageText, prunedText } from '../../shared/prunePlan';
import { imageName } from '../../shared/imageReference';

export function registerLogCommand(program: Command, cli: Cli): void {
  program
    .command('log')
    .summary("the audit log of Holdfast's changes, newest first")
    .description('The audit log of every change Holdfast made (pins, unpins, archives removed, prunes), newest first.')
    .argument('[node]', 'only the changes made on this node')
    .option('--json', JSON_HELP)
    .addHelpText('after', helpAfter(['holdfast log', 'holdfast log lab1-n1', "holdfast log lab1-n1 --json | jq '.[0]'"]))
    .action(async (name: string | undefined) => {
      // audit.list reads the local audit log and nothing else: read here, without loading the
      // service (and the core that reaches nodes under it), which would only slow the start.
      const audit = new AuditLog(holdfastHome());
      const { entries, omitted } = await audit.recent(name);
      // Older entries beyond the limit audit.listBytes stay in the file: said on stderr, so --json stays an array.
      const count = (n: number, one: string, many: string) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
      if (omitted) cli.io.err(`note: the newest ${count(entries.length, 'entry', 'entries')} shown; ${count(omitted, 'older one', 'older ones')} only in ${safe(audit.file)}`);
      if (printedAsJson(cli, entries)) return;
      if (entries.length === 0) return cli.io.out('no changes recorded yet');
      // On a terminal, fitted to it: long lines wrapped, references elided in the middle.
      const screen = cli.screen();
      for (const e of entries) {
        const what =
          e.action === 'rm-archive'
            ? `removed ${e.archive?.path} (sha256 ${e.archive?.sha256})${e.forced ? ' FORCED' : ''}`
            : e.pruned
              ? `prune: ${prunedText(e.pruned)}`
              : `${e.action} ${plural(e.changes?.length ?? 0, 'reference')}${e.note ? ` — ${e.note}` : ''}`;
        // Paths, references and labels came from nodes: one line each, harmless.
        cli.io.out(screen.text(`${safe(e.time)}  ${safe(e.user)}  ${safe(e.node)}  ${safe(what)}`));
        for (const c of e.changes ?? []) cli.io.out(screen.text(`    ${screen.ref(safe(c.ref), 4)}\n${describeChange(c, '      ')}`));
        for (const i of e.pruned?.images ?? []) cli.io.out(screen.text(`    ${screen.ref(safe(imageName(i.refs, '')), 4)}  ${prunedImageText(i)}`));
        for (const w of e.warnings ?? []) cli.io.out(screen.text(`    warning: ${safe(w)}`));
      }
    });
}
