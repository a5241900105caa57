// holdfast log — the audit log of every change Holdfast made.
import type { Command } from 'commander';
import { AuditLog } from '../../core/audit/log';
import { holdfastHome } from '../../core/config/home';
import { describeChange, type Cli } from '../context';

export function registerLogCommand(program: Command, cli: Cli): void {
  program
    .command('log')
    .description('the audit log of every change Holdfast made, newest first')
    .argument('[node]')
    .option('--json', 'machine-readable output')
    .action(async (name: string | undefined, o) => {
      const entries = await new AuditLog(holdfastHome()).list(name);
      if (o.json) return cli.io.out(JSON.stringify(entries, null, 2));
      if (entries.length === 0) return cli.io.out('no changes recorded yet');
      for (const e of entries) {
        const what =
          e.action === 'rm-archive'
            ? `removed ${e.archive?.path} (sha256 ${e.archive?.sha256})${e.forced ? ' FORCED' : ''}`
            : `${e.action} ${e.changes?.length ?? 0} references${e.note ? ` — ${e.note}` : ''}`;
        cli.io.out(`${e.time}  ${e.user}  ${e.node}  ${what}`);
        for (const c of e.changes ?? []) cli.io.out(`    ${c.ref}\n${describeChange(c, '      ')}`);
      }
    });
}
