// `holdfast` — the command line on the same core as the app.
import { Command, CommanderError, Option } from 'commander';
import { holdfastHome } from '../core/config/home';
import { NodeStore, completeNode } from '../core/config/nodes';
import { HoldfastError, toErrorInfo } from '../core/errors';
import path from 'node:path';
import { IndexCache } from '../core/archives/scan';
import { AuditLog } from '../core/audit/log';
import { applyPinChange, checkRemoval, inventory, planPinChange, removeArchiveSafely, type OpsContext } from '../core/node/operations';
import { NodeSession } from '../core/node/session';
import { importToNodes } from '../core/import/fleet';
import { inspectLocalArchive } from '../core/import/inspectLocal';
import { summary } from '../core/import/run';
import { uploadArchive } from '../core/upload';
import type { PinTarget } from '../core/pins/plan';
import type { LabelChange, PinPlan } from '../shared/domain';
import type { NodeDef, NodeInput } from '../shared/domain';
import { EXIT, exitCodeFor } from './exit';
import { humanSize, shortDigest, table } from './format';
import { serveCommand } from './serve';

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
}

const defaultIo: Io = {
  out: (s) => process.stdout.write(s.endsWith('\n') ? s : s + '\n'),
  err: (s) => process.stderr.write(s.endsWith('\n') ? s : s + '\n'),
};

function parsePort(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new HoldfastError('INVALID_INPUT', `invalid port "${v}"`);
  return n;
}

async function withSession<T>(def: NodeDef, fn: (s: NodeSession) => Promise<T>, acceptNewHostKey?: boolean): Promise<T> {
  const session = await NodeSession.open(def, acceptNewHostKey ? { acceptNewHostKey: true } : {});
  try {
    return await fn(session);
  } finally {
    await session.close();
  }
}

/** "k: before → after" lines for the labels a change touches. */
function describeChange(c: LabelChange, indent = '    '): string {
  const keys = [...new Set([...Object.keys(c.before), ...Object.keys(c.after)])].filter((k) => c.before[k] !== c.after[k]).sort();
  return keys.map((k) => `${indent}${k}: ${c.before[k] ?? '(absent)'} → ${c.after[k] ?? '(absent)'}`).join('\n');
}

export function buildProgram(io: Io = defaultIo): Command {
  const store = () => new NodeStore(holdfastHome());
  const program = new Command('holdfast')
    .description('Durable image pins and safe air-gap imports for k3s nodes, over SSH.')
    .version('0.1.0')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .exitOverride();

  const node = program.command('node').description('manage the nodes Holdfast knows about');

  node
    .command('add')
    .description('add a node; connects once to verify its host key and containerd (unless --no-check)')
    .argument('<name>', 'a short name for the node')
    .requiredOption('--host <host>', 'host name or IP address')
    .option('--port <port>', 'SSH port', parsePort, 22)
    .option('--user <user>', 'SSH user', 'root')
    .option('--identity <file>', 'private key file (default: ssh-agent)')
    .option('--known-hosts <file>', 'known_hosts file (default: ~/.ssh/known_hosts)')
    .option('--accept-new-host-key', 'trust and record the host key of a host not yet in known_hosts')
    .option('--socket <path>', 'containerd socket on the node', '/run/k3s/containerd/containerd.sock')
    .option('--images-dir <path>', 'k3s images dir on the node', '/var/lib/rancher/k3s/agent/images')
    .option('--namespace <ns>', 'containerd namespace', 'k8s.io')
    .option('--no-check', 'save without connecting (for nodes out of reach right now)')
    .action(async (name: string, o) => {
      const input: NodeInput = {
        name,
        host: o.host,
        port: o.port,
        user: o.user,
        socket: o.socket,
        imagesDir: o.imagesDir,
        namespace: o.namespace,
        ...(o.identity ? { identity: o.identity } : {}),
        ...(o.knownHosts ? { knownHosts: o.knownHosts } : {}),
      };
      const s = store();
      const existing = await s.list();
      if (existing.some((n) => n.name === name)) {
        throw new HoldfastError('CONFLICT', `a node named "${name}" already exists`, { hint: 'Remove it first with `holdfast node rm`, or choose another name.' });
      }
      const def = completeNode(input);
      if (o.check) {
        const info = await withSession(def, (sess) => sess.detect(), Boolean(o.acceptNewHostKey));
        await s.add(input);
        io.out(`added ${name}: containerd ${info.containerdVersion}` + (info.distroVersion ? `, ${info.distro} ${info.distroVersion}` : ''));
      } else {
        await s.add(input);
        io.out(`added ${name} (not checked)`);
      }
    });

  node
    .command('ls')
    .description('list configured nodes')
    .option('--json', 'machine-readable output')
    .action(async (o) => {
      const nodes = await store().list();
      if (o.json) return io.out(JSON.stringify(nodes, null, 2));
      if (nodes.length === 0) return io.out('no nodes yet: add one with `holdfast node add NAME --host HOST`');
      io.out(
        table(
          ['NAME', 'ADDRESS', 'USER', 'SOCKET', 'IMAGES DIR'],
          nodes.map((n) => [n.name, `${n.host}:${n.port}`, n.user, n.socket, n.imagesDir]),
        ),
      );
    });

  node
    .command('rm')
    .description('forget a node (nothing on the node changes)')
    .argument('<name>')
    .action(async (name: string) => {
      await store().remove(name);
      io.out(`removed ${name}`);
    });

  const opsContext = (): OpsContext => {
    const home = holdfastHome();
    return { audit: new AuditLog(home), indexCache: new IndexCache(path.join(home, 'cache', 'archive-index')) };
  };
  const onNode = async <T>(name: string, fn: (s: NodeSession, ctx: OpsContext) => Promise<T>): Promise<T> => {
    const def = await store().get(name);
    const ctx = opsContext();
    return withSession(def, (s) => fn(s, ctx));
  };

  program
    .command('images')
    .description('every image reference on a node: pin state and fate at the next k3s start')
    .argument('<node>')
    .option('--json', 'machine-readable output')
    .action(async (name: string, o) => {
      const inv = await onNode(name, (s, ctx) => inventory(s, ctx));
      const images = inv.images;
      if (o.json) return io.out(JSON.stringify(images, null, 2));
      if (images.length === 0) return io.out(`no images in namespace ${(await store().get(name)).namespace} on ${name}`);
      io.out(
        table(
          ['REFERENCE', 'PIN', 'AFTER RESTART', 'IMAGE ID', 'SIZE', 'PLATFORMS'],
          images.map((i) => [
            i.name,
            i.pin,
            i.afterRestart === 'unpinned' && i.pin !== 'none' ? 'LOSES PIN' : i.afterRestart,
            shortDigest(i.imageId),
            humanSize(i.size),
            i.platforms.join(',') || '-',
          ]),
        ),
      );
      const counts = { durable: 0, k3s: 0, none: 0 };
      for (const i of images) counts[i.pin]++;
      io.out(`\n${images.length} references: ${counts.durable} durable, ${counts.k3s} k3s-pinned, ${counts.none} unpinned`);
      const atRisk = images.filter((i) => i.pin !== 'none' && i.afterRestart === 'unpinned');
      if (atRisk.length) {
        io.out(`${atRisk.length} will lose their pin at the next k3s start:`);
        for (const i of atRisk) io.out(`  ${i.name}: ${i.reason}`);
        io.out(`Make them durable with: holdfast pin ${name} --all-k3s`);
      }
    });

  program
    .command('archives')
    .description("the files in a node's images dir: what each archive brings and whether it can be removed safely")
    .argument('<node>')
    .option('--json', 'machine-readable output')
    .action(async (name: string, o) => {
      const inv = await onNode(name, (s, ctx) => inventory(s, ctx));
      if (o.json) return io.out(JSON.stringify(inv.archives, null, 2));
      if (inv.archives.length === 0) return io.out(`the images dir of ${name} is empty`);
      io.out(
        table(
          ['PATH', 'KIND', 'SIZE', 'IMAGES', 'IMPORTED', 'SAFE TO REMOVE'],
          inv.archives.map((a) => [
            a.path + (a.cachedByK3s ? ' (cached by k3s)' : ''),
            a.kind,
            humanSize(a.size),
            a.error ? `unreadable: ${a.error}` : a.images.join('\n') || '-',
            a.kind === 'archive' ? (a.imported ? 'yes' : 'no') : '-',
            a.kind === 'archive' ? (a.safeToRemove ? 'yes' : 'no') : '-',
          ]),
        ),
      );
      for (const a of inv.archives.filter((x) => x.kind === 'archive' && !x.safeToRemove)) io.out(`\n${a.path}: ${a.reason}`);
    });

  const printPlan = (plan: PinPlan, applied: boolean) => {
    const verb = plan.action === 'pin' ? 'made durable' : 'released';
    if (plan.changes.length === 0) io.out('nothing to change');
    for (const c of plan.changes) io.out(`${applied ? verb : 'would be ' + verb}: ${c.ref}\n${describeChange(c)}`);
    for (const u of plan.unchanged) io.out(`unchanged: ${u.ref} (${u.reason})`);
  };

  program
    .command('pin')
    .description('make pins durable: set io.cri-containerd.pinned and remove the k3s label on every reference of each image')
    .argument('<node>')
    .argument('[refs...]', 'image references to pin (every reference of the same image is pinned too)')
    .option('--archive <path>', 'the images an archive in the images dir brings (path relative to the images dir)')
    .option('--all-k3s', 'every image k3s has pinned')
    .option('--dry-run', 'show what would change, change nothing')
    .option('--json', 'machine-readable output')
    .action(async (name: string, refs: string[], o) => {
      const given = [refs.length > 0, Boolean(o.archive), Boolean(o.allK3s)].filter(Boolean).length;
      if (given !== 1) throw new HoldfastError('INVALID_INPUT', 'name references, or give --archive PATH, or --all-k3s (exactly one of them)');
      const target: PinTarget = refs.length ? { refs } : o.archive ? { archive: o.archive } : { allK3s: true };
      const plan = await onNode(name, (s, ctx) => (o.dryRun ? planPinChange(s, ctx, 'pin', target) : applyPinChange(s, ctx, 'pin', target)));
      if (o.json) return io.out(JSON.stringify(plan, null, 2));
      printPlan(plan, !o.dryRun);
    });

  program
    .command('unpin')
    .description('release durable pins Holdfast (or anyone) set: kubelet may then garbage-collect the image')
    .argument('<node>')
    .argument('<refs...>')
    .option('--dry-run', 'show what would change, change nothing')
    .option('--json', 'machine-readable output')
    .action(async (name: string, refs: string[], o) => {
      const target: PinTarget = { refs };
      const plan = await onNode(name, (s, ctx) => (o.dryRun ? planPinChange(s, ctx, 'unpin', target) : applyPinChange(s, ctx, 'unpin', target)));
      if (o.json) return io.out(JSON.stringify(plan, null, 2));
      printPlan(plan, !o.dryRun);
    });

  program
    .command('rm-archive')
    .description('remove an archive from the images dir, only if every image it brings is complete and durably pinned')
    .argument('<node>')
    .argument('<path>', 'path relative to the images dir')
    .option('--force', 'remove even if the check fails (logged)')
    .option('--dry-run', 'run the check only')
    .action(async (name: string, p: string, o) => {
      if (o.dryRun) {
        const { check } = await onNode(name, (s, ctx) => checkRemoval(s, ctx, p));
        io.out(check.allowed ? `${p} can be removed safely` : `${p} cannot be removed safely:\n  ${check.problems.join('\n  ')}`);
        if (!check.allowed) throw new HoldfastError('REFUSED', `${p} is not safe to remove`);
        return;
      }
      const entry = await onNode(name, (s, ctx) => removeArchiveSafely(s, ctx, p, { force: Boolean(o.force) }));
      io.out(`removed ${p} (${humanSize(entry.archive!.size)}, sha256 ${entry.archive!.sha256})${entry.forced ? ' — FORCED, logged' : ''}`);
    });

  const progressLine = (label: string) => {
    let last = 0;
    return (p: { bytesDone?: number; bytesTotal?: number; rate?: number; eta?: number | null; message?: string }) => {
      if (!process.stderr.isTTY || Date.now() - last < 250) return;
      last = Date.now();
      const pct = p.bytesTotal ? Math.floor((100 * (p.bytesDone ?? 0)) / p.bytesTotal) : null;
      const rate = p.rate ? `${humanSize(p.rate)}/s` : '';
      const eta = p.eta != null ? `ETA ${Math.ceil(p.eta)} s` : '';
      process.stderr.write(`\r\x1b[2K${label}: ${[p.message, pct !== null ? `${pct}%` : '', rate, eta].filter(Boolean).join('  ')}`);
    };
  };
  const clearProgress = () => process.stderr.isTTY && process.stderr.write('\r\x1b[2K');
  const cancelOnSigint = () => {
    const abort = new AbortController();
    const onSig = () => abort.abort();
    process.once('SIGINT', onSig);
    return { signal: abort.signal, done: () => process.off('SIGINT', onSig) };
  };

  program
    .command('upload')
    .description("send an archive into a node's images dir: verified by SHA-256 on the node, resumable, never half-visible to k3s")
    .argument('<node>')
    .argument('<file>')
    .option('--as <path>', 'name in the images dir (default: the file name)')
    .action(async (name: string, file: string, o) => {
      const archive = await inspectLocalArchive(file);
      const { signal, done } = cancelOnSigint();
      try {
        const r = await onNode(name, (s) =>
          uploadArchive(s, archive.path, { remoteName: o.as ?? path.basename(archive.path), expectedSha256: archive.sha256, signal, onProgress: progressLine(name) }),
        );
        clearProgress();
        io.out(
          r.alreadyPresent
            ? `${name}: ${r.relPath} is already there (sha256 ${r.sha256})`
            : `${name}: uploaded ${r.relPath} (${humanSize(archive.size)}${r.resumedFrom ? `, resumed from ${humanSize(r.resumedFrom)}` : ''}, sha256 ${r.sha256} verified on the node)`,
        );
      } finally {
        done();
      }
    });

  program
    .command('import')
    .description('the guided air-gap import: inspect, upload to every node, wait for k3s, make pins durable, remove the archive')
    .argument('<nodes-and-file...>', 'one or more nodes, then the archive')
    .option('--pin', 'make the pins durable once k3s has imported the images')
    .option('--remove-archive', 'then remove the archive safely (needs --pin)')
    .option('--parallel <n>', 'nodes at a time', (v) => Number(v), 4)
    .option('--timeout <seconds>', 'how long to wait for k3s to import', (v) => Number(v), 120)
    .action(async (args: string[], o) => {
      if (args.length < 2) throw new HoldfastError('INVALID_INPUT', 'give at least one node and the archive: holdfast import NODE... FILE');
      if (o.removeArchive && !o.pin) throw new HoldfastError('INVALID_INPUT', '--remove-archive needs --pin: an archive is only removed once its images are durably pinned');
      if (!Number.isInteger(o.parallel) || o.parallel < 1) throw new HoldfastError('INVALID_INPUT', '--parallel takes a whole number ≥ 1');
      const file = args[args.length - 1]!;
      const nodes = [...new Set(args.slice(0, -1))];
      const defs = await Promise.all(nodes.map((n) => store().get(n)));
      const archive = await inspectLocalArchive(file);
      io.err(`${path.basename(archive.path)}: ${archive.format} archive, ${archive.compression}, ${humanSize(archive.size)}, ${archive.images.length} images, sha256 ${archive.sha256}`);
      const ctx = opsContext();
      const { signal, done } = cancelOnSigint();
      let outcomes;
      try {
        outcomes = await importToNodes(
          nodes,
          (n, fn) => withSession(defs.find((d) => d.name === n)!, fn),
          ctx,
          archive,
          {
            pin: Boolean(o.pin),
            removeArchive: Boolean(o.removeArchive),
            parallel: o.parallel,
            importTimeoutMs: o.timeout * 1000,
            signal,
            onNode: (() => {
              const lines = new Map(nodes.map((n) => [n, progressLine(n)]));
              return (n: string, p: Parameters<ReturnType<typeof progressLine>>[0]) => lines.get(n)!(p);
            })(),
          },
        );
      } finally {
        done();
        clearProgress();
      }
      let failed = 0;
      let refused = 0;
      for (const oc of outcomes) {
        if (oc.ok) io.out(`${oc.node}: ok — ${oc.result.skipped ?? summary(oc.result)}`);
        else {
          failed++;
          const info = toErrorInfo(oc.error);
          if (exitCodeFor(info.code) === EXIT.REFUSED) refused++;
          io.out(`${oc.node}: FAILED — ${info.message}${info.hint ? ` (${info.hint})` : ''}`);
        }
      }
      if (failed) {
        throw new HoldfastError(refused === failed ? 'REFUSED' : 'INTERNAL', `${failed} of ${nodes.length} nodes failed; the others' work is done and kept. Run the same command again to retry.`);
      }
    });

  program
    .command('log')
    .description('the audit log of every change Holdfast made, newest first')
    .argument('[node]')
    .option('--json', 'machine-readable output')
    .action(async (name: string | undefined, o) => {
      const entries = await new AuditLog(holdfastHome()).list(name);
      if (o.json) return io.out(JSON.stringify(entries, null, 2));
      if (entries.length === 0) return io.out('no changes recorded yet');
      for (const e of entries) {
        const what =
          e.action === 'rm-archive'
            ? `removed ${e.archive?.path} (sha256 ${e.archive?.sha256})${e.forced ? ' FORCED' : ''}`
            : `${e.action} ${e.changes?.length ?? 0} references${e.note ? ` — ${e.note}` : ''}`;
        io.out(`${e.time}  ${e.user}  ${e.node}  ${what}`);
        for (const c of e.changes ?? []) io.out(`    ${c.ref}\n${describeChange(c, '      ')}`);
      }
    });

  program
    .command('serve')
    .description('serve the Holdfast UI and its API on 127.0.0.1 (token-guarded)')
    .addOption(new Option('--port <port>', 'port (default: any free port)').argParser(parsePort))
    .action(async (o) => serveCommand({ port: o.port, out: io.out }));

  return program;
}

export async function main(argv: string[], io: Io = defaultIo): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync(argv);
    return EXIT.OK;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') return EXIT.OK;
      return EXIT.USAGE;
    }
    const info = toErrorInfo(e);
    let line = `holdfast: ${info.message}`;
    if (info.hint) line += ` — ${info.hint}`;
    io.err(line);
    return info.code === 'INTERNAL' && !(e instanceof HoldfastError) ? EXIT.FAILURE : exitCodeFor(info.code);
  }
}
