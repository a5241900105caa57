// holdfast upload | import — getting archives onto nodes, verified, resumable, guided.
import path from 'node:path';
import type { Command } from 'commander';
import { HoldfastError, toErrorInfo } from '../../core/errors';
import { withSession, type Cli } from '../context';
import { EXIT, exitCodeFor } from '../exit';
import { humanSize, terminalSafe } from '../format';

// Archive readers, uploads and the import run load when one of these commands runs.
const inspectLocal = () => import('../../core/import/inspectLocal');

export function registerTransferCommands(program: Command, cli: Cli): void {
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
      const [{ inspectLocalArchive }, { uploadArchive }] = await Promise.all([inspectLocal(), import('../../core/upload')]);
      const archive = await inspectLocalArchive(file);
      const { signal, done } = cancelOnSigint();
      try {
        const r = await cli.onNode(name, (s) =>
          uploadArchive(s, archive.path, { remoteName: o.as ?? path.basename(archive.path), expectedSha256: archive.sha256, signal, onProgress: progressLine(name) }),
        );
        clearProgress();
        cli.io.out(
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
      const defs = await Promise.all(nodes.map((n) => cli.store().get(n)));
      const [{ inspectLocalArchive }, { importToNodes }, { summary }] = await Promise.all([
        inspectLocal(),
        import('../../core/import/fleet'),
        import('../../core/import/run'),
      ]);
      const archive = await inspectLocalArchive(file);
      cli.io.err(`${path.basename(archive.path)}: ${archive.format} archive, ${archive.compression}, ${humanSize(archive.size)}, ${archive.images.length} images, sha256 ${archive.sha256}`);
      const ctx = cli.opsContext();
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
        if (oc.ok) cli.io.out(`${oc.node}: ok — ${oc.result.skipped ?? summary(oc.result)}`);
        else {
          failed++;
          const info = toErrorInfo(oc.error);
          if (exitCodeFor(info.code) === EXIT.REFUSED) refused++;
          cli.io.out(`${oc.node}: FAILED — ${terminalSafe(info.message)}${info.hint ? ` (${terminalSafe(info.hint)})` : ''}`);
        }
      }
      if (failed) {
        throw new HoldfastError(refused === failed ? 'REFUSED' : 'INTERNAL', `${failed} of ${nodes.length} nodes failed; the others' work is done and kept. Run the same command again to retry.`);
      }
    });
}
