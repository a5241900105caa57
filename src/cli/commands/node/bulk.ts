// holdfast node import-ssh-config | add-bulk — many nodes at once, validated, one atomic write.
// They have no operation in the contract (the app has no bulk import); the ssh config and CSV
// readers load when a command runs, not when the CLI starts.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { HoldfastError } from '../../../core/errors';
import { plural, word } from '../../../shared/wording';
import type { Cli } from '../../context';
import type { Store } from '../../nodeStore';
import type { SshImportPlan } from '../../../core/config/sshConfig';
import type { NodeDef, NodeInput } from '../../../shared/domain/nodes';
import { JSON_HELP, printedAsJson } from '../../output';
import type { ColumnFit } from '../../fit';
import { helpAfter } from '../../help';
import { commandLine } from '../../commandLine';
import { remedyCommand } from '../../remedyText';

/** How the tables of nodes to add give way: names stay whole, the key file's path is elided, the user hidden last. */
const NODE_IMPORT_COLUMNS: readonly ColumnFit[] = [{}, { kind: 'ref', min: 15 }, { hide: 1 }, { kind: 'ref', min: 20 }, { kind: 'text', min: 8 }, { kind: 'text', min: 8 }];

export function registerNodeImportCommands(node: Command, cli: Cli): void {
  registerImportSshConfig(node, cli);
  registerAddBulk(node, cli);
}

/** The options of import-ssh-config, as commander parses them. */
interface SshConfigOptions {
  file?: string;
  group?: string;
  knownHosts?: string;
  dryRun?: boolean;
}

function registerImportSshConfig(node: Command, cli: Cli): void {
  node
    .command('import-ssh-config')
    .summary('add the Host entries of an ssh config')
    .description('Add the concrete Host entries of an OpenSSH client config as nodes (not checked: run `holdfast inspect` next).')
    .argument('[host-patterns...]', 'only the aliases matching these ssh patterns')
    .option('--file <file>', 'the ssh config to read (default: ~/.ssh/config)')
    .option('--group <group>', 'put every imported node in this group')
    .option('--known-hosts <file>', 'known_hosts file for every imported node')
    .option('--dry-run', 'show what would be imported, change nothing')
    .option('--json', JSON_HELP)
    .addHelpText(
      'after',
      helpAfter(
        [
          'holdfast node import-ssh-config --dry-run',
          "holdfast node import-ssh-config 'lab1-*' --group lab1",
          'holdfast node import-ssh-config --file ./site-ssh-config --group lab2',
          'holdfast inspect --group lab1',
        ],
        [
          'Host entries that are only patterns (Host lab1-*) are not nodes: their options apply to the aliases they match, as in ssh. A ProxyJump becomes --jump when the jump host is a node too (configured, or imported in the same run); ProxyCommand and Match are not supported.',
          'Without --known-hosts, a node uses its UserKnownHostsFile, else ~/.ssh/known_hosts.',
        ],
      ),
    )
    .action((patterns: string[], o: SshConfigOptions) => importSshConfig(cli, patterns, o));
}

// complete (the ssh config's path, read and parsed) → validate (planSshImport: what can be a
// node, beside the configured ones) → run (one atomic write, unless --dry-run) → print.
async function importSshConfig(cli: Cli, patterns: string[], o: SshConfigOptions): Promise<void> {
  const { defaultSshConfigEnv, planSshImport, readSshConfigFile } = await import('../../../core/config/sshConfig');
  const env = defaultSshConfigEnv();
  const file = path.resolve(o.file ?? path.join(env.home, '.ssh', 'config'));
  let parsed;
  try {
    parsed = readSshConfigFile(file, env);
  } catch (e) {
    if (e instanceof HoldfastError) throw e; // over a limit (limits.ts sshConfig.*): it says which
    throw new HoldfastError('NOT_FOUND', `cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { hint: 'Name the file with --file.' });
  }
  const store = cli.store();
  const plan = planSshImport(parsed, env, {
    existing: await store.list(),
    ...(patterns.length ? { patterns } : {}),
    ...(o.group ? { group: o.group } : {}),
    ...(o.knownHosts ? { knownHosts: path.resolve(o.knownHosts) } : {}),
  });
  const added = o.dryRun ? [] : await store.addMany(plan.nodes);
  if (printedAsJson(cli, sshImportJson(Boolean(o.dryRun), plan, added))) return;
  printSshImport(cli, file, plan, added, o);
}

function printSshImport(cli: Cli, file: string, plan: SshImportPlan, added: readonly NodeDef[], o: SshConfigOptions): void {
  if (plan.nodes.length) {
    cli.io.out(
      cli.screen().table(
        ['NAME', 'ADDRESS', 'USER', 'IDENTITY', 'JUMP', 'GROUP'],
        plan.nodes.map((n) => [n.name, `${n.host}:${n.port ?? 22}`, n.user ?? 'root', n.identity ?? '(ssh-agent)', n.jump ?? '-', n.group ?? '-']),
        NODE_IMPORT_COLUMNS,
      ),
    );
  }
  for (const k of plan.skipped) cli.io.out(cli.screen().text(`skipped ${k.alias}: ${skippedReason(k)}`));
  for (const n of plan.notes) cli.io.err(`note: ${n}`);
  const what = plural(plan.nodes.length, 'node');
  const text = (line: string) => cli.io.out(cli.screen().text(line));
  if (o.dryRun) text(`dry run: would import ${what} from ${file}; nothing changed`);
  else if (added.length) text(`imported ${what} from ${file} (not checked: run \`${commandLine(['inspect', ...(o.group ? ['--group', o.group] : [])])}\`)`);
  else text(`nothing to import from ${file}`);
}

/** The options of add-bulk, as commander parses them. */
interface AddBulkOptions {
  knownHosts?: string;
  dryRun?: boolean;
}

function registerAddBulk(node: Command, cli: Cli): void {
  node
    .command('add-bulk')
    .summary('add many nodes from a CSV file')
    .description('Add many nodes from a CSV file, all or nothing: one problem in the file and none is added. Not checked: run `holdfast inspect` next.')
    .argument('<file>', 'CSV file with a header row naming the columns')
    .option('--known-hosts <file>', 'known_hosts file for every node (default: ~/.ssh/known_hosts)')
    .option('--dry-run', 'validate and show, change nothing')
    .addHelpText(
      'after',
      helpAfter(
        [
          '# nodes.csv:',
          '#   name,host,port,user,identity,group',
          '#   lab1-n1,10.20.0.11,22,root,/home/ops/.ssh/id_ed25519,lab1',
          '#   lab1-n2,10.20.0.12,,ops,,lab1',
          'holdfast node add-bulk nodes.csv --dry-run',
          'holdfast node add-bulk nodes.csv --known-hosts ~/.ssh/known_hosts.lab1',
        ],
        [
          'Columns: name,host,port,user,identity,group, in any order; only name and host are required. Empty cells take the defaults: port 22, user root, ssh-agent, no group. Lines starting with # are ignored.',
        ],
      ),
    )
    .action((file: string, o: AddBulkOptions) => addBulk(cli, file, o));
}

// complete (the file read) → validate (every row, and no name already configured: all or
// nothing) → run (one atomic write, unless --dry-run) → print.
async function addBulk(cli: Cli, file: string, o: AddBulkOptions): Promise<void> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (e) {
    throw new HoldfastError('NOT_FOUND', `cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const store = cli.store();
  const nodes = await validNodes(cli, store, file, text, o);
  if (!o.dryRun) await store.addMany(nodes);
  cli.io.out(
    cli.screen().table(
      ['NAME', 'ADDRESS', 'USER', 'IDENTITY', 'GROUP'],
      nodes.map((n) => [n.name, `${n.host}:${n.port ?? 22}`, n.user ?? 'root', n.identity ?? '(ssh-agent)', n.group ?? '-']),
      [NODE_IMPORT_COLUMNS[0]!, NODE_IMPORT_COLUMNS[1]!, NODE_IMPORT_COLUMNS[2]!, NODE_IMPORT_COLUMNS[3]!, NODE_IMPORT_COLUMNS[5]!],
    ),
  );
  cli.io.out(cli.screen().text(o.dryRun ? `dry run: ${plural(nodes.length, 'node')} ${word(nodes.length, 'is')} valid; nothing changed` : `added ${plural(nodes.length, 'node')} (not checked: run \`holdfast inspect\`)`));
}

/** The CSV's nodes, or (one problem in the file, each said on stderr) none: INVALID_INPUT. */
async function validNodes(cli: Cli, store: Store, file: string, text: string, o: AddBulkOptions): Promise<NodeInput[]> {
  const { parseNodeCsv } = await import('../../../core/usecases/fleet/bulk');
  const { nodes, problems } = parseNodeCsv(text, o.knownHosts ? { knownHosts: path.resolve(o.knownHosts) } : {});
  const existing = new Set((await store.list()).map((n) => n.name));
  for (const n of nodes) if (existing.has(n.name)) problems.push(`"${n.name}" is already configured`);
  if (problems.length) {
    for (const p of problems) cli.io.err(`${file}: ${p}`);
    throw new HoldfastError('INVALID_INPUT', `${plural(problems.length, 'problem')} in ${file}: nothing was added`, {
      hint: 'Columns: name,host,port,user,identity,group (header row first; empty cells take the defaults).',
    });
  }
  return nodes;
}

/** `node import-ssh-config --json`: the nodes added (or, with --dry-run, that would be), and what was skipped. */
export function sshImportJson(
  dryRun: boolean,
  plan: SshImportPlan,
  added: readonly NodeDef[],
): { dryRun: boolean; nodes: readonly (NodeDef | NodeInput)[]; skipped: { alias: string; reason: string }[]; notes: string[] } {
  return { dryRun, nodes: dryRun ? plan.nodes : added, skipped: plan.skipped.map((k) => ({ alias: k.alias, reason: skippedReason(k) })), notes: plan.notes };
}

/** Why an alias was skipped, its remedy worded as the command that changes the node there. */
function skippedReason(k: SshImportPlan['skipped'][number]): string {
  return k.remedy ? `${k.reason} (change it with \`${remedyCommand(k.remedy)}\`)` : k.reason;
}
