// holdfast upload | import — getting archives onto nodes, verified, resumable, guided.
// Progress goes to stderr through one ProgressBoard (src/cli/progress.ts): a live view of one
// line per node on a terminal, plain lines in logs and CI.
import path from 'node:path';
import type { Command } from 'commander';
import { HoldfastError, toErrorInfo } from '../../core/errors';
import type { InspectedArchive, InspectOptions } from '../../core/import/inspectLocal';
import { importOptionsProblem } from '../../shared/importOptions';
import { compressionName, plural } from '../../shared/wording';
import { withSession, type Cli } from '../context';
import { EXIT, exitCodeFor } from '../exit';
import { humanSize, terminalSafe } from '../format';
import { ProgressBoard } from '../progress';
import { inspectionRow, NodeRows, uploadPatch } from '../transferRows';

// Not through the service (yet): the contract has no upload operation, and its import
// (jobs.startImport) is the app's background job — no --parallel or --timeout, no progress of
// the local inspection, and per-node results the job does not carry (summary, renames,
// warnings). Both run the same core (core/import/fleet, core/upload) the service runs.
//
// Archive readers, uploads and the import run load when one of these commands runs.
const inspectLocal = () => import('../../core/import/inspectLocal');

type Inspect = (file: string, opts: InspectOptions) => Promise<InspectedArchive>;

function cancelledError(message: string): Error {
  return Object.assign(new Error(message), { name: 'AbortError' });
}

/**
 * Ctrl-C cancels: the live rows are erased first, so the message gets a line of its own, then
 * the work stops where it is (partial uploads are kept). A second Ctrl-C quits at once (the
 * handler is gone by then, so Node's default applies).
 */
function cancelOnSigint(board: ProgressBoard, err: (s: string) => void) {
  const abort = new AbortController();
  const onSig = () => {
    board.close();
    err('holdfast: cancelling — run the same command again to resume (Ctrl-C again quits at once)');
    abort.abort(cancelledError('cancelled'));
  };
  process.once('SIGINT', onSig);
  return { signal: abort.signal, done: () => process.off('SIGINT', onSig) };
}

/** The local inspection with a row of its own: a 1 GB archive takes a while to read. */
async function inspectWithProgress(inspect: Inspect, file: string, board: ProgressBoard, signal: AbortSignal): Promise<InspectedArchive> {
  const name = path.basename(file);
  board.set('inspect', inspectionRow(name));
  try {
    return await inspect(file, { signal, onRead: (read, size) => board.set('inspect', inspectionRow(name, read, size)) });
  } catch (e) {
    if (signal.aborted) throw cancelledError(`the inspection of ${name} was cancelled; nothing was sent`);
    throw e;
  } finally {
    board.delete('inspect');
  }
}

/** "bundle.tar.zst: oci archive, zstd, 120 MiB, 3 images, sha256 …" */
function describeArchive(a: InspectedArchive): string {
  return `${path.basename(a.path)}: ${a.format} archive, ${compressionName(a.compression)}, ${humanSize(a.size)}, ${plural(a.images.length, 'image')}, sha256 ${a.sha256}`;
}

export function registerTransferCommands(program: Command, cli: Cli): void {
  program
    .command('upload')
    .description("send an archive into a node's images dir: verified by SHA-256 on the node, resumable, never half-visible to k3s")
    .argument('<node>')
    .argument('<file>')
    .option('--as <path>', 'name in the images dir (default: the file name)')
    .action(async (name: string, file: string, o) => {
      const [{ inspectLocalArchive }, { uploadArchive }] = await Promise.all([inspectLocal(), import('../../core/upload')]);
      const board = new ProgressBoard(process.stderr);
      const { signal, done } = cancelOnSigint(board, cli.io.err);
      try {
        const archive = await inspectWithProgress(inspectLocalArchive, file, board, signal);
        const rows = new NodeRows(board);
        rows.update(name, { phase: 'checking', message: 'connecting' });
        const r = await cli.onNode(name, (s) =>
          uploadArchive(s, archive.path, {
            remoteName: o.as ?? path.basename(archive.path),
            expectedSha256: archive.sha256,
            signal,
            onProgress: (p) => rows.update(name, uploadPatch(p)),
            onNotice: (notice) => rows.update(name, { notice }),
          }),
        );
        board.close();
        cli.io.out(
          r.alreadyPresent
            ? `${name}: ${r.relPath} is already there (sha256 ${r.sha256})`
            : `${name}: uploaded ${r.relPath} (${humanSize(archive.size)}${r.resumedFrom ? `, resumed from ${humanSize(r.resumedFrom)}` : ''}, sha256 ${r.sha256} verified on the node)`,
        );
      } finally {
        done();
        board.close();
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
      const optionsProblem = importOptionsProblem({ pin: Boolean(o.pin), removeArchive: Boolean(o.removeArchive) });
      if (optionsProblem) throw new HoldfastError('INVALID_INPUT', optionsProblem, { hint: 'Add --pin to --remove-archive.' });
      if (!Number.isInteger(o.parallel) || o.parallel < 1) throw new HoldfastError('INVALID_INPUT', '--parallel takes a whole number ≥ 1');
      const file = args[args.length - 1]!;
      const nodes = [...new Set(args.slice(0, -1))];
      const defs = await Promise.all(nodes.map((n) => cli.store().get(n)));
      const [{ inspectLocalArchive }, { importToNodes }, { summary }] = await Promise.all([
        inspectLocal(),
        import('../../core/import/fleet'),
        import('../../core/import/run'),
      ]);
      const board = new ProgressBoard(process.stderr);
      const { signal, done } = cancelOnSigint(board, cli.io.err);
      let outcomes;
      try {
        const archive = await inspectWithProgress(inspectLocalArchive, file, board, signal);
        board.note(describeArchive(archive));
        const ctx = cli.opsContext();
        const rows = new NodeRows(board);
        // On a terminal every node has its line from the start; a log gets lines as things happen.
        if (board.live) for (const n of nodes) rows.update(n, { phase: 'queued' });
        outcomes = await importToNodes(
          nodes,
          (n, fn) =>
            withSession(defs.find((d) => d.name === n)!, fn).catch((e: unknown) => {
              rows.failed(n, toErrorInfo(e).message);
              throw e;
            }),
          ctx,
          archive,
          {
            pin: Boolean(o.pin),
            removeArchive: Boolean(o.removeArchive),
            parallel: o.parallel,
            importTimeoutMs: o.timeout * 1000,
            signal,
            onNode: (n, p) => rows.update(n, p),
          },
        );
      } finally {
        done();
        board.close();
      }
      let failed = 0;
      let refused = 0;
      for (const oc of outcomes) {
        if (oc.ok) {
          cli.io.out(`${oc.node}: ok — ${oc.result.skipped ?? summary(oc.result)}`);
          // Node-derived sentences (names, versions): one line each on stderr, harmless.
          if (oc.result.renamed) cli.io.err(`note: ${oc.node}: ${terminalSafe(oc.result.renamed)}`);
          for (const w of oc.result.warnings ?? []) cli.io.err(`warning: ${oc.node}: ${terminalSafe(w)}`);
        }
        else {
          failed++;
          const info = toErrorInfo(oc.error);
          if (exitCodeFor(info.code) === EXIT.REFUSED) refused++;
          cli.io.out(`${oc.node}: FAILED — ${terminalSafe(info.message)}${info.hint ? ` (${terminalSafe(info.hint)})` : ''}`);
        }
      }
      if (failed) {
        throw new HoldfastError(
          refused === failed ? 'REFUSED' : 'INTERNAL',
          `${failed} of ${plural(nodes.length, 'node')} failed; the others' work is done and kept. Run the same command again to retry.`,
        );
      }
    });
}
