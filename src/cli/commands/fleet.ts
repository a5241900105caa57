// holdfast inspect — every node at once: reachability, versions, pins and their fate, archives,
// disk, and where the nodes disagree (drift). Text, JSON, a self-contained HTML page or CSV.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { writeFileAtomic } from '../../core/config/atomic';
import { HoldfastError } from '../../core/errors';
import type { FleetReport } from '../../shared/fleet';
import { DEFAULT_FLEET_CONCURRENCY, DEFAULT_NODE_TIMEOUT_MS } from '../../core/fleet/defaults';
import { isLowDisk, losingImagesOf } from '../../core/fleet/summary';
import { formatBytes } from '../../shared/format';
import { atRiskOf } from '../../shared/needs';
import { selectNodes as pickNodes } from '../../shared/nodeSelection';
import type { NodeDef } from '../../shared/domain';
import type { LiveEvent } from '../../shared/contract';
import { plural, word } from '../../shared/wording';
import type { Cli } from '../context';
import { onCtrlC } from '../jobs';
import { table, terminalSafe as safe } from '../format';
import { lostPinsText } from './inspect';

// `inspect` is the service's fleet run (fleet.start with --concurrency and --timeout), followed
// through its fleet.node and fleet.done events in process; Ctrl-C is fleet.cancel, which still
// reports every node (those that had not answered as cancelled). node import-ssh-config and
// add-bulk have no operation in the contract (the app has no bulk import).
//
// The reports and the ssh config and CSV readers load when a command runs, not when the CLI starts.
const reports = () => Promise.all([import('../../core/fleet/html'), import('../../core/fleet/csv')]);

function positiveInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new HoldfastError('INVALID_INPUT', `"${v}" is not a whole number ≥ 1`);
  return n;
}

function positiveSeconds(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new HoldfastError('INVALID_INPUT', `"${v}" is not a number of seconds > 0`);
  return n;
}

/** The nodes a command names: NODE..., --group G, or (--all / nothing) every node. */
export async function selectNodes(cli: Cli, names: string[], o: { all?: boolean; group?: string }): Promise<NodeDef[]> {
  if (names.length && (o.all || o.group)) throw new HoldfastError('INVALID_INPUT', 'name nodes, or use --all or --group, not both');
  if (o.all && o.group) throw new HoldfastError('INVALID_INPUT', '--all and --group exclude each other');
  const sel = pickNodes(await cli.store().list(), { names, group: o.group });
  if ('problem' in sel) throw new HoldfastError(sel.problem.code, sel.problem.message, { hint: sel.problem.hint });
  return sel.nodes;
}

const short = (nodes: string[], max = 4) => (nodes.length <= max ? nodes.join(', ') : `${nodes.slice(0, max).join(', ')} +${nodes.length - max}`) || '-';

/** The default output: one line per node, then drift, then what needs attention. */
export function fleetText(report: FleetReport, defs: NodeDef[]): string {
  const group = new Map(defs.map((d) => [d.name, d.group ?? '']));
  const rule = report.summary.lowDiskRule;
  const out: string[] = [];
  out.push(
    table(
      ['NODE', 'GROUP', 'STATUS', 'DISTRO', 'CONTAINERD', 'REFS', 'DURABLE', 'K3S', 'NONE', 'LOSE PIN', 'AT RISK', 'ARCHIVES', 'DISK FREE'],
      report.nodes.map((n) => {
        if (!n.reachable) {
          const code = n.error?.code ?? 'INTERNAL';
          return [n.node, group.get(n.node) || '-', code === 'UNREACHABLE' ? 'UNREACHABLE' : `UNREACHABLE (${code})`, '-', '-', '-', '-', '-', '-', '-', '-', '-', '-'];
        }
        const imgs = n.images ?? [];
        const c = { durable: 0, k3s: 0, none: 0 };
        for (const i of imgs) c[i.pin]++;
        const v = n.versions;
        const archives = (n.archives ?? []).filter((a) => a.kind === 'archive').length;
        const disk = n.disk ? `${formatBytes(n.disk.freeBytes)}${isLowDisk(n, rule) ? ' LOW' : ''}` : '?';
        return [
          n.node,
          group.get(n.node) || '-',
          'ok',
          v ? (v.distroVersion ? `${v.distro} ${v.distroVersion}` : v.distro) : '-',
          v?.containerdVersion ?? '-',
          imgs.length,
          c.durable,
          c.k3s,
          c.none,
          losingImagesOf(n).length,
          atRiskOf(n.images, n.needs).length,
          archives,
          disk,
        ];
      }),
    ),
  );
  const s = report.summary;
  out.push(
    `\n${s.reachable} of ${s.nodes} nodes reachable · ${s.atRiskImages ?? 0} needed image${s.atRiskImages === 1 ? '' : 's'} at risk · ${s.losingPins} image${s.losingPins === 1 ? '' : 's'} lose${s.losingPins === 1 ? 's' : ''} ${s.losingPins === 1 ? 'its' : 'their'} pin at the next k3s start · ${s.lowDisk} low on disk · ${(s.durationMs / 1000).toFixed(1)} s`,
  );
  // Which nodes Holdfast could not read needs for: their verdicts rest on provenance alone.
  const blind = report.nodes.filter((n) => n.needs && n.needs.basis === 'provenance');
  if (blind.length) {
    out.push(`No source of site needs on ${blind.length === report.nodes.length ? 'any node' : short(blind.map((n) => n.node))}: images from air-gap archives count as needed there.`);
    for (const n of blind.slice(0, 8)) out.push(`  ${n.node}: ${safe(n.needs!.noSource ?? 'none read')}`);
  }
  if (report.drift.length) {
    out.push(`\nDrift: ${plural(report.drift.length, 'image')} ${report.drift.length === 1 ? 'differs' : 'differ'} across the reachable nodes (pinned = pinned now)`);
    out.push(
      table(
        ['IMAGE', 'PRESENT', 'MISSING ON', 'UNPINNED ON'],
        report.drift.map((d) => [d.name, `${d.presentOn.length}/${d.presentOn.length + d.missingOn.length}`, short(d.missingOn), short(d.unpinnedOn)]),
      ),
    );
  } else if (s.reachable > 1) out.push('\nNo drift: the reachable nodes have the same images, pinned alike.');
  if (s.atRisk.length) {
    out.push('\nNeeds attention:');
    const hints = new Map(report.nodes.map((n) => [n.node, n.error?.hint]));
    for (const r of s.atRisk) {
      // Reasons and hints quote the nodes' own errors: one line each, harmless.
      for (const why of r.reasons) out.push(`  ${r.node}: ${safe(why)}`);
      const hint = hints.get(r.node);
      if (hint) out.push(`  ${' '.repeat(r.node.length)}  → ${safe(hint)}`);
      // Each needed image at risk: what it is, who needs it, where a copy is.
      for (const a of r.atRisk ?? []) out.push(`  ${' '.repeat(r.node.length)}  - ${safe(a.refs[0] ?? '')}: ${safe(a.because)}${a.heldBy?.length ? ` (copy: ${safe(a.heldBy.join(', '))})` : ''}`);
      if (r.atRisk?.some((a) => a.pinnable)) out.push(`  ${' '.repeat(r.node.length)}  → holdfast pin ${r.node} --needed`);
    }
  }
  const lost = report.nodes.filter((n) => n.lostPins?.length);
  if (lost.length) {
    out.push("\nPins lost behind Holdfast's back:");
    for (const n of lost) out.push(`  ${n.node}:\n${lostPinsText(n.lostPins!, '    ')}`);
  }
  return out.join('\n');
}

export function registerFleetCommands(program: Command, cli: Cli): void {
  program
    .command('inspect')
    .description('inspect many nodes in parallel: pins and their fate, archives, disk, and drift across nodes')
    .argument('[nodes...]', 'nodes to inspect (default: every node)')
    .option('--all', 'every configured node (the default)')
    .option('--group <group>', 'the nodes of one group (site)')
    .option('--json', 'the report as JSON on stdout')
    .option('--html <file>', 'write the report as one self-contained HTML file')
    .option('--csv <file>', 'write one CSV row per node and reference')
    .option('--concurrency <n>', `nodes inspected at once (default ${DEFAULT_FLEET_CONCURRENCY})`, positiveInt, DEFAULT_FLEET_CONCURRENCY)
    .option('--timeout <seconds>', `per node, connect and inventory (default ${DEFAULT_NODE_TIMEOUT_MS / 1000})`, positiveSeconds, DEFAULT_NODE_TIMEOUT_MS / 1000)
    .action(async (names: string[], o) => {
      if (names.length && (o.all || o.group)) throw new HoldfastError('INVALID_INPUT', 'name nodes, or use --all or --group, not both');
      if (o.all && o.group) throw new HoldfastError('INVALID_INPUT', '--all and --group exclude each other');
      const tty = Boolean(process.stderr.isTTY);
      let runId: string | undefined;
      let total = 0;
      let done = 0;
      let down = 0;
      let cancelled = false;
      const early: LiveEvent[] = [];
      let finish!: (report: FleetReport) => void;
      const finished = new Promise<FleetReport>((resolve) => (finish = resolve));
      const seen = (e: LiveEvent) => {
        if (e.type === 'fleet.node' && e.payload.runId === runId) {
          done++;
          if (!e.payload.result.reachable) down++;
          if (tty) process.stderr.write(`\r\x1b[2Kinspected ${done}/${total}${down ? ` (${down} unreachable)` : ''}`);
        } else if (e.type === 'fleet.done' && e.payload.runId === runId) finish(e.payload.report);
      };
      // Ctrl-C stops the run; its report (the nodes that had not answered: cancelled) still comes.
      const offSig = onCtrlC(() => {
        cancelled = true;
        if (runId !== undefined) void cli.call('fleet.cancel', { runId }).catch(() => undefined);
      });
      let report: FleetReport;
      let defs: NodeDef[];
      let unsubscribe = () => {};
      try {
        unsubscribe = await cli.subscribe((e) => {
          if (e.type !== 'fleet.node' && e.type !== 'fleet.done') return;
          if (runId === undefined) early.push(e);
          else seen(e);
        });
        const run = await cli.call('fleet.start', {
          ...(names.length ? { nodes: names } : {}),
          ...(o.group ? { group: o.group as string } : {}),
          concurrency: o.concurrency,
          timeout: o.timeout,
        });
        runId = run.runId;
        total = run.nodes.length;
        if (cancelled) void cli.call('fleet.cancel', { runId }).catch(() => undefined);
        for (const e of early) seen(e);
        report = await finished;
        const inRun = new Set(run.nodes);
        defs = (await cli.call('nodes.list', {})).filter((d) => inRun.has(d.name));
      } finally {
        offSig();
        unsubscribe();
        if (tty) process.stderr.write('\r\x1b[2K');
      }
      const [{ fleetHtml }, { fleetCsv }] = await reports();
      if (o.html) await writeFileAtomic(path.resolve(o.html), fleetHtml(report), 0o644);
      if (o.csv) await writeFileAtomic(path.resolve(o.csv), fleetCsv(report), 0o644);
      if (o.json) cli.io.out(JSON.stringify(report, null, 2));
      else {
        cli.io.out(fleetText(report, defs));
        if (o.html) cli.io.out(`wrote ${o.html}`);
        if (o.csv) cli.io.out(`wrote ${o.csv}`);
      }
      const down2 = report.nodes.filter((n) => !n.reachable);
      if (down2.length) {
        throw new HoldfastError('UNREACHABLE', `${down2.length} of ${plural(report.nodes.length, 'node')} unreachable: ${short(down2.map((n) => n.node), 8)}`, {
          hint: "The report covers the others and gives each unreachable node's error.",
        });
      }
    });
}

/** holdfast node import-ssh-config | add-bulk — many nodes at once, validated, one atomic write. */
export function registerNodeImportCommands(node: Command, cli: Cli): void {
  node
    .command('import-ssh-config')
    .description('add the concrete Host entries of an OpenSSH client config as nodes (not checked: run `holdfast inspect` next)')
    .argument('[host-patterns...]', 'only aliases matching these ssh-style patterns (e.g. "edge-*")')
    .option('--file <file>', 'the ssh config to read (default: ~/.ssh/config)')
    .option('--group <group>', 'put every imported node in this group')
    .option('--known-hosts <file>', 'known_hosts file for every imported node (default: its UserKnownHostsFile, else ~/.ssh/known_hosts)')
    .option('--dry-run', 'show what would be imported, change nothing')
    .option('--json', 'machine-readable output')
    .action(async (patterns: string[], o) => {
      const { defaultSshConfigEnv, planSshImport, readSshConfigFile } = await import('../../core/config/sshConfig');
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
      if (o.json) return cli.io.out(JSON.stringify({ dryRun: Boolean(o.dryRun), nodes: o.dryRun ? plan.nodes : added, skipped: plan.skipped, notes: plan.notes }, null, 2));
      if (plan.nodes.length) {
        cli.io.out(
          table(
            ['NAME', 'ADDRESS', 'USER', 'IDENTITY', 'JUMP', 'GROUP'],
            plan.nodes.map((n) => [n.name, `${n.host}:${n.port ?? 22}`, n.user ?? 'root', n.identity ?? '(ssh-agent)', n.jump ?? '-', n.group ?? '-']),
          ),
        );
      }
      for (const k of plan.skipped) cli.io.out(`skipped ${k.alias}: ${k.reason}`);
      for (const n of plan.notes) cli.io.err(`note: ${n}`);
      const what = plural(plan.nodes.length, 'node');
      if (o.dryRun) cli.io.out(`dry run: would import ${what} from ${file}; nothing changed`);
      else if (added.length) cli.io.out(`imported ${what} from ${file} (not checked: run \`holdfast inspect${o.group ? ` --group ${o.group}` : ''}\`)`);
      else cli.io.out(`nothing to import from ${file}`);
    });

  node
    .command('add-bulk')
    .description('add many nodes from a CSV file with a header row: name,host,port,user,identity,group (all or nothing; not checked)')
    .argument('<file>')
    .option('--known-hosts <file>', 'known_hosts file for every node (default: ~/.ssh/known_hosts)')
    .option('--dry-run', 'validate and show, change nothing')
    .action(async (file: string, o) => {
      let text: string;
      try {
        text = await fs.readFile(file, 'utf8');
      } catch (e) {
        throw new HoldfastError('NOT_FOUND', `cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
      }
      const { parseNodeCsv } = await import('../../core/fleet/bulk');
      const { nodes, problems } = parseNodeCsv(text, o.knownHosts ? { knownHosts: path.resolve(o.knownHosts) } : {});
      const store = cli.store();
      const existing = new Set((await store.list()).map((n) => n.name));
      for (const n of nodes) if (existing.has(n.name)) problems.push(`"${n.name}" is already configured`);
      if (problems.length) {
        for (const p of problems) cli.io.err(`${file}: ${p}`);
        throw new HoldfastError('INVALID_INPUT', `${plural(problems.length, 'problem')} in ${file}: nothing was added`, {
          hint: 'Columns: name,host,port,user,identity,group (header row first; empty cells take the defaults).',
        });
      }
      if (!o.dryRun) await store.addMany(nodes);
      cli.io.out(
        table(
          ['NAME', 'ADDRESS', 'USER', 'IDENTITY', 'GROUP'],
          nodes.map((n) => [n.name, `${n.host}:${n.port ?? 22}`, n.user ?? 'root', n.identity ?? '(ssh-agent)', n.group ?? '-']),
        ),
      );
      cli.io.out(o.dryRun ? `dry run: ${plural(nodes.length, 'node')} ${word(nodes.length, 'is')} valid; nothing changed` : `added ${plural(nodes.length, 'node')} (not checked: run \`holdfast inspect\`)`);
    });
}
