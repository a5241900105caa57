// holdfast guard — the node keeping its pin set (#50): each run reads the pin set and the node,
// makes every reference the set selects durable through the pin plan (pins.apply, target pinSet:
// the same checks and audit log as `pin`), restores pins lost behind Holdfast's back, and writes
// a Prometheus textfile of what it fixed and could not, and records the run in
// $HOLDFAST_HOME/guard-state.json, which `inspect` reads over SSH. It only ever sets pin labels: it never
// unpins, never touches an image outside the set, never stops or restarts containerd or k3s.
import { mkdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { writeFileAtomic } from '../../core/config/atomic';
import { HoldfastError, toErrorInfo } from '../../core/errors';
import { parseGoDuration } from '../../shared/gcPolicy';
import { isImageIdRecord } from '../../shared/imageReference';
import { lostPinKindText } from '../../shared/lostPins';
import { pinNotHonoured } from '../../shared/nodeWarnings';
import { guardFixedTotal, renderGuardMetrics } from '../../shared/metrics';
import type { LostPinKind } from '../../shared/domain/lostPins';
import type { NeedsReport } from '../../shared/needs';
import type { Cli } from '../context';
import { terminalSafe as safe } from '../format';
import { helpAfter } from '../help';
import { localNodeOf, withLocalOptions } from '../localNode';
import { JSON_HELP, printedAsJson } from '../output';

/** One run, as `guard -o json` prints it. */
export interface GuardRunJson {
  node: string;
  pinSet: string;
  /** sha256 of the pin set file's bytes, `sha256:<hex>`. */
  pinSetDigest: string;
  dryRun: boolean;
  time: string;
  /** References made durable (with --dry-run: that would be); `restored`: its durable pin had been lost. */
  fixed: { ref: string; restored?: LostPinKind }[];
  /** References the set selects that are durable (after the run). */
  durable: string[];
  /** References the set names that the node lacks. */
  missing: string[];
  /** References made or kept durable whose image fails the set's spec.signatures, with why (pinned anyway). */
  unverified: { ref: string; reason: string }[];
  /** Patterns that match nothing on the node. */
  unmatched: string[];
  warnings?: string[];
}

/** How often deploy/'s timer and DaemonSet loop run guard: what a run records without --every or --interval. */
const DEFAULT_INTERVAL = 300;

/** --every: a Go duration (30s, 5m, 1h), at least a second. */
function every(v: string): number {
  const s = parseGoDuration(v);
  if (s === null || s < 1) throw new InvalidArgumentError('It wants a duration of at least 1s, as 30s, 5m or 1h.');
  return s;
}

/** One run: the pin set read again (an edit applies at the next run), the node read, the plan applied. */
export async function guardOnce(cli: Cli, node: string, file: string, dryRun: boolean): Promise<GuardRunJson> {
  // zod and the pin set rules load only when a pin set is read, not for --help (lazyLoad.test.ts).
  const { loadPinSetFile, resolveOnNode } = await import('../pinSetFile');
  const { set, digest } = await loadPinSetFile(file);
  const { resolution: r, lost, needs } = await resolveOnNode(cli, node, set);
  const plan = await cli.call(dryRun ? 'pins.plan' : 'pins.apply', { node, action: 'pin', target: { pinSet: set.spec } });
  const fixed = plan.changes.map((c) => {
    const kind = lost.get(c.ref);
    return { ref: c.ref, ...(kind ? { restored: kind } : {}) };
  });
  return {
    node,
    pinSet: set.metadata.name,
    pinSetDigest: digest,
    dryRun,
    time: new Date().toISOString(),
    fixed,
    durable: dryRun ? r.durable : [...r.durable, ...r.pin],
    missing: r.missing,
    unverified: r.unverified,
    unmatched: r.unmatched,
    ...warningsOf(set.spec.needed ? needsWarnings(needs) : [], plan.warnings),
  };
}

/**
 * `needed: true` and a source of needs failed (kubectl refused or failed, a pod without its
 * ServiceAccount token): why, and, with no source at all, what counts instead.
 */
function needsWarnings(needs: NeedsReport): string[] {
  const none = needs.noSource ? [`no source of site needs (${needs.noSource}): images from air-gap archives count as needed`] : [];
  return [...none, ...needs.notes.map((n) => `site needs: ${n}`)];
}

const warningsOf = (...lists: (readonly string[] | undefined)[]) => {
  const all = lists.flatMap((l) => l ?? []);
  return all.length ? { warnings: all } : {};
};

export function guardRunText(j: GuardRunJson): string {
  const n = j.fixed.length;
  const restored = j.fixed.filter((f) => f.restored).length;
  const verb = j.dryRun ? 'would make' : 'made';
  const out = [
    `pin set ${safe(j.pinSet)} on ${safe(j.node)}: ${verb} ${n} reference${n === 1 ? '' : 's'} durable${restored ? ` (${restored} restored)` : ''}; ` +
      `${j.durable.length} of its references durable; ${j.missing.length} named image${j.missing.length === 1 ? '' : 's'} missing` +
      (j.unverified.length ? `; ${j.unverified.length} unverified` : ''),
  ];
  for (const f of j.fixed.filter((x) => !isImageIdRecord(x.ref))) out.push(f.restored ? `  restored: ${safe(f.ref)} (${lostPinKindText(f.restored)})` : `  ${j.dryRun ? 'would pin' : 'pinned'}: ${safe(f.ref)}`);
  for (const m of j.missing) out.push(`  MISSING: ${safe(m)} (not on the node: import it)`);
  for (const u of j.unverified) out.push(`  UNVERIFIED: ${safe(u.ref)} (${safe(u.reason)}; pinned anyway)`);
  for (const p of j.unmatched) out.push(`  pattern ${safe(p)} matches no reference here`);
  for (const w of j.warnings ?? []) out.push(`  warning: ${safe(w)}`);
  return out.join('\n');
}

/** The textfile's directory must exist (node_exporter's collector dir): a typo would write where nothing reads. */
async function textfileTarget(file: string | undefined): Promise<string | null> {
  if (!file) return null;
  const abs = path.resolve(file);
  if (!(await stat(path.dirname(abs)).catch(() => null))?.isDirectory()) {
    throw new HoldfastError('INVALID_INPUT', `no directory ${safe(path.dirname(abs))} for --textfile`, {
      hint: "Point --textfile into node_exporter's --collector.textfile.directory (e.g. /var/lib/prometheus/node-exporter).",
    });
  }
  return abs;
}

/** The run's textfile, written atomically; a failed run still says when it ran and that it failed. */
async function writeTextfile(file: string, pinSet: string, run: GuardRunJson | null): Promise<void> {
  const previous = guardFixedTotal(await readFile(file, 'utf8').catch(() => null));
  const restored = run ? run.fixed.filter((f) => f.restored).length : 0;
  const text = renderGuardMetrics(
    {
      pinSet,
      ok: run !== null,
      pinned: run ? run.fixed.length - restored : 0,
      restored,
      fixedTotal: previous + (run?.fixed.length ?? 0),
      durable: run?.durable.length ?? 0,
      missing: run?.missing ?? [],
      unverified: run?.unverified.map((u) => u.ref) ?? [],
    },
    Math.floor(Date.now() / 1000),
  );
  await writeFileAtomic(file, text, 0o644);
}

/** Resolves after `seconds`, or at once when `signal` aborts. */
const pause = (seconds: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const t = setTimeout(resolve, seconds * 1000);
    signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

interface GuardFlags {
  pinSet: string;
  textfile?: string;
  dryRun?: boolean;
  every?: number;
  interval?: number;
}

/** Guard's own record of the run, in $HOLDFAST_HOME (core/node/guardState.ts): what inspect reads over SSH. */
async function writeState(node: string, o: GuardFlags, run: GuardRunJson | null, failure: unknown): Promise<void> {
  const [{ guardStateRecord }, { GUARD_STATE_FILE }, { holdfastHome }] = await Promise.all([import('../../shared/guardState'), import('../../core/node/guardState'), import('../../core/config/home')]);
  const record = guardStateRecord({
    node,
    pinSet: run ? { name: run.pinSet, digest: run.pinSetDigest } : { name: path.basename(o.pinSet), digest: null },
    time: new Date().toISOString(),
    intervalSeconds: o.every ?? o.interval ?? DEFAULT_INTERVAL,
    ok: run !== null,
    ...(failure ? { error: toErrorInfo(failure).message } : {}),
    fixed: run?.fixed ?? [],
    missing: run?.missing ?? [],
    unverified: run?.unverified.map((u) => u.ref) ?? [],
    durable: run?.durable.length ?? 0,
    ...(run?.warnings?.length ? { warnings: run.warnings } : {}),
  });
  const home = holdfastHome();
  await mkdir(home, { recursive: true, mode: 0o700 });
  await writeFileAtomic(path.join(home, GUARD_STATE_FILE), `${JSON.stringify(record, null, 1)}\n`, 0o644);
}

/** Runs once, or every `o.every` seconds until SIGTERM or SIGINT (the run under way finishes first). */
async function guardLoop(cli: Cli, node: string, o: GuardFlags, textfile: string | null): Promise<void> {
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  if (o.every) for (const s of ['SIGTERM', 'SIGINT'] as const) process.once(s, onSignal);
  // As `pin` says it: allowed (the label is harmless), but kubelet ignores it on this containerd.
  const ignored = pinNotHonoured(node, await cli.call('nodes.info', { node }).catch(() => null));
  if (ignored) cli.io.err(`warning: ${ignored}`);
  try {
    for (;;) {
      let run: GuardRunJson | null = null;
      let failure: unknown = null;
      try {
        run = await guardOnce(cli, node, o.pinSet, Boolean(o.dryRun));
      } catch (e) {
        failure = e;
      }
      // A pin set that cannot be read names no set: the file's own name stands for it.
      if (textfile) await writeTextfile(textfile, run?.pinSet ?? path.basename(o.pinSet), run);
      if (!o.dryRun) await writeState(node, o, run, failure);
      if (run && !printedAsJson(cli, run)) cli.io.out(guardRunText(run));
      if (failure && !o.every) throw failure;
      if (failure) {
        const e = toErrorInfo(failure);
        cli.io.err(`holdfast: guard run failed: ${safe(e.message)}${e.hint ? ` — ${safe(e.hint)}` : ''}`);
      }
      if (!o.every || stop.signal.aborted) return;
      await pause(o.every, stop.signal);
      if (stop.signal.aborted) return;
    }
  } finally {
    for (const s of ['SIGTERM', 'SIGINT'] as const) process.off(s, onSignal);
  }
}

export function registerGuardCommand(program: Command, cli: Cli): void {
  const cmd = program
    .command('guard')
    .summary('keep a pin set durable on this node (timer or loop)')
    .description(
      "On the node itself: make every image a pin set names durable (its images, the site's needed images, its patterns), restore durable pins lost behind Holdfast's back, and write what it fixed and could not as Prometheus series. Never unpins, never touches another image, never stops containerd or k3s.",
    )
    .requiredOption('--pin-set <file>', 'the pin set file (YAML or JSON, apiVersion holdfast/v1, kind PinSet), read again at every run')
    .option('--textfile <file>', "write the run's series to this file (atomically), for node_exporter's textfile collector")
    .option('--dry-run', 'plan only: change nothing, write no textfile')
    .option('--every <duration>', 'run again after this long (30s, 5m, 1h) until stopped; a failed run does not stop it', every)
    .option('--interval <duration>', 'how often a timer or loop runs this guard (default: --every, else 5m); recorded, so inspect can tell a guard that stopped', every)
    .option('--json', JSON_HELP);
  withLocalOptions(cmd)
    .addHelpText(
      'after',
      helpAfter(
        [
          '# On the node, as root',
          'holdfast guard --local --pin-set /etc/holdfast/pinset.yaml --dry-run',
          'holdfast guard --local --pin-set /etc/holdfast/pinset.yaml \\',
          '  --textfile /var/lib/prometheus/node-exporter/holdfast-guard.prom --every 5m',
          '# What it would do, from a laptop',
          'holdfast pinset show lab1-n1 --pin-set site.yaml',
        ],
        [
          'Safe on every node at once: it only sets pin labels, one key at a time, as `holdfast pin` does.',
          'An image the set names that the node lacks is reported (holdfast_guard_missing_images), never faked: import it.',
        ],
      ),
    )
    .action(async (o) => {
      const node = await localNodeOf(cli, o);
      if (!node) throw new HoldfastError('INVALID_INPUT', 'guard keeps the node it runs on: add --local', { hint: 'From a laptop, `holdfast pinset show NODE --pin-set FILE` shows what it would change.' });
      if (o.dryRun && o.textfile) throw new HoldfastError('INVALID_INPUT', '--dry-run writes nothing: leave out --textfile');
      await guardLoop(cli, node, o as GuardFlags, await textfileTarget(o.textfile));
    });
}
