// holdfast log — the audit log of every change Holdfast made.
import type { Command } from 'commander';
import { AuditLog } from '../../core/audit/log';
import { holdfastHome } from '../../core/config/home';
import { describeChange, type Cli } from '../context';
import { terminalSafe as safe } from '../format';
import { plural } from '../../shared/wording';

export function registerLogCommand(program: Command, cli: Cli): void {
  program
    .command('log')
    .description('the audit log of every change Holdfast made, newest first')
    .argument('[node]')
    .option('--json', 'machine-readable output')
    .action(async (name: string | undefined, o) => {
      // audit.list reads the local audit log and nothing else: read here, without loading the
      // service (and the core that reaches nodes under it), which would only slow the start.
      const entries = await new AuditLog(holdfastHome()).list(name);
      if (o.json) return cli.io.out(JSON.stringify(entries, null, 2));
      if (entries.length === 0) return cli.io.out('no changes recorded yet');
      for (const e of entries) {
        const what =
          e.action === 'rm-archive'
            ? `removed ${e.archive?.path} (sha256 ${e.archive?.sha256})${e.forced ? ' FORCED' : ''}`
            : `${e.action} ${plural(e.changes?.length ?? 0, 'reference')}${e.note ? ` — ${e.note}` : ''}`;
        // Paths, references and labels came from nodes: one line each, harmless.
        cli.io.out(`${safe(e.time)}  ${safe(e.user)}  ${safe(e.node)}  ${safe(what)}`);
        for (const c of e.changes ?? []) cli.io.out(`    ${safe(c.ref)}\n${describeChange(c, '      ')}`);
      }
    });
}
