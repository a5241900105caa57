// holdfast upload | import — getting archives onto nodes, verified, resumable, guided.
// Progress goes to stderr through one ProgressBoard (src/cli/progress.ts): a live view of one
// line per node on a terminal, plain lines in logs and CI.
import path from 'node:path';
import type { Command } from 'commander';
import { HoldfastError } from '../../core/errors';
import type { Job, JobNodeProgress } from '../../shared/domain';
import { compressionName, plural } from '../../shared/wording';
import type { Cli } from '../context';
import { positiveInt, positiveSeconds } from '../options';
import { EXIT, exitCodeFor } from '../exit';
import { humanSize, terminalSafe } from '../format';
import { helpAfter } from '../help';
import { cancelledError, followJob, nodePatch } from '../jobs';
import { ProgressBoard } from '../progress';
import { NodeRows } from '../transferRows';

// Both run as the service's jobs (jobs.startUpload, jobs.startImport), in this process: the
// service inspects the archive (refusing what k3s would not import before anything is sent),
// checks the options (--parallel, --timeout, --pin with --remove-archive) with the contract's
// rules, and runs the same core the app's import runs. The CLI shows the job's changes as they
// come and prints each node's result.

/** "bundle.tar.zst: oci archive, zstd, 120 MiB, 3 images, sha256 …" */
function describeArchive(a: Job['archive']): string {
  return `${path.basename(a.path)}: ${a.format} archive, ${compressionName(a.compression!)}, ${humanSize(a.size)}, ${plural(a.images ?? 0, 'image')}, sha256 ${a.sha256}`;
}

/** Shows a job's node rows as they change: a failed or cancelled node gets its FAILED row. */
function jobRows(board: ProgressBoard, opts: { queued: boolean; done: boolean }) {
  const rows = new NodeRows(board);
  const last = new Map<string, string>();
  return (job: Job) => {
    for (const n of job.nodes) {
      const key = JSON.stringify(n);
      if (last.get(n.node) === key) continue;
      last.set(n.node, key);
      if (n.state === 'succeeded' && !opts.done) continue; // the result line says it
      // Waiting for a --parallel slot: a line of its own on a terminal only.
      if (n.state === 'queued') {
        if (opts.queued) rows.update(n.node, { phase: 'queued' });
      } else if (n.state === 'failed' || n.state === 'cancelled') rows.failed(n.node, n.message);
      else rows.update(n.node, nodePatch(n));
    }
  };
}

/** A failed node's error as the service reported it (code, hint, fingerprints kept). */
function nodeError(n: JobNodeProgress): HoldfastError {
  if (!n.error) return new HoldfastError('INTERNAL', n.message || `${n.node} failed`);
  const { code, message, ...extra } = n.error;
  return new HoldfastError(code, message, extra);
}

/**
 * What a cancelled upload left: the upload's own words when it got to say them (a partial file
 * kept, or nothing written), else only what its progress shows — a partial file only when bytes
 * are on the node.
 */
function cancelledUpload(n: JobNodeProgress, file: string): string {
  if (n.message && n.message !== 'cancelled') return n.message;
  return n.bytesDone > 0
    ? `the upload of ${file} to ${n.node} was cancelled at byte ${n.bytesDone}; the partial file is kept (the same command resumes it)`
    : `the upload of ${file} to ${n.node} was cancelled before any byte of it was written there`;
}

export function registerTransferCommands(program: Command, cli: Cli): void {
  program
    .command('upload')
    .summary('send an archive to a node (verified, resumable)')
    .description("Send an archive into a node's images dir: verified by SHA-256 on the node, resumable, never half-visible to k3s.")
    .argument('<node>', 'the node to send it to')
    .argument('<file>', 'the image archive on this machine')
    .option('--as <path>', 'name in the images dir (default: the file name)')
    .addHelpText(
      'after',
      helpAfter(
        ['holdfast upload lab1-n1 ./nginx-1.27.tar.zst', 'holdfast upload lab1-n1 ./site-bundle.tar.gz --as site/bundle-2025-06.tar.gz'],
        [
          'Cut short (Ctrl-C, a dropped link)? Run the same command again: it resumes. An archive already there with the same SHA-256 is not sent again.',
          'k3s imports it at its next start; `holdfast import` also waits for that and makes the pins durable.',
        ],
      ),
    )
    .action(async (name: string, file: string, o) => {
      const abs = path.resolve(file);
      const board = new ProgressBoard(process.stderr);
      let job: Job;
      try {
        job = await followJob(cli, () => cli.call('jobs.startUpload', { node: name, path: abs, ...(o.as !== undefined ? { as: o.as as string } : {}) }), {
          file: abs,
          board,
          err: cli.io.err,
          onJob: jobRows(board, { queued: false, done: false }),
        });
      } finally {
        board.close();
      }
      const n = job.nodes[0]!;
      if (n.state === 'cancelled') throw cancelledError(cancelledUpload(n, path.basename(abs)));
      if (n.state !== 'succeeded' || !n.result) throw nodeError(n);
      const r = n.result;
      cli.io.out(
        !r.uploaded
          ? `${name}: ${r.relPath} is already there (sha256 ${r.sha256})`
          : `${name}: uploaded ${r.relPath} (${humanSize(job.archive.size)}${r.resumedFrom ? `, resumed from ${humanSize(r.resumedFrom)}` : ''}, sha256 ${r.sha256} verified on the node)`,
      );
    });

  program
    .command('import')
    .summary('the guided air-gap import of an archive to nodes')
    .description('The guided air-gap import: inspect the archive, upload it to every node, wait for k3s to import it, make the pins durable, remove the archive.')
    .argument('<nodes-and-file...>', 'one or more nodes, then the archive')
    .option('--pin', 'make the pins durable once k3s has imported the images')
    .option('--remove-archive', 'then remove the archive safely (needs --pin)')
    .option('--parallel <n>', 'nodes at a time', positiveInt, 4)
    .option('--timeout <seconds>', 'how long to wait for k3s to import', positiveSeconds, 120)
    .addHelpText(
      'after',
      helpAfter(
        [
          'holdfast import lab1-n1 ./nginx-1.27.tar.zst',
          'holdfast import lab1-n1 lab1-n2 ./nginx-1.27.tar.zst --pin',
          'holdfast import lab1-n1 lab1-n2 lab1-n3 ./site-bundle.tar.gz \\',
          '  --pin --remove-archive --parallel 2 --timeout 300',
        ],
        [
          'An archive k3s would not import is refused before anything is sent. A node that fails does not stop the others; run the same command again to retry it (what is already on a node is not sent again).',
          '--pin --remove-archive is the safe order in one go: the archive goes only once every image it brings is verified complete and durably pinned.',
        ],
      ),
    )
    .action(async (args: string[], o) => {
      if (args.length < 2) throw new HoldfastError('INVALID_INPUT', 'give at least one node and the archive: holdfast import NODE... FILE');
      const file = path.resolve(args[args.length - 1]!);
      const nodes = [...new Set(args.slice(0, -1))];
      const board = new ProgressBoard(process.stderr);
      let job: Job;
      try {
        job = await followJob(
          cli,
          () => cli.call('jobs.startImport', { nodes, path: file, pin: Boolean(o.pin), removeArchive: Boolean(o.removeArchive), parallel: o.parallel, timeout: o.timeout }),
          {
            file,
            board,
            err: cli.io.err,
            onStart: (j) => board.note(describeArchive(j.archive)),
            // On a terminal every node has its line from the start; a log gets lines as things happen.
            onJob: jobRows(board, { queued: board.live, done: true }),
          },
        );
      } finally {
        board.close();
      }
      let failed = 0;
      let refused = 0;
      for (const n of job.nodes) {
        if (n.state === 'succeeded' && n.result) {
          cli.io.out(`${n.node}: ok — ${n.result.summary}`);
          // Node-derived sentences (names, versions): one line each on stderr, harmless.
          if (n.result.renamed) cli.io.err(`note: ${n.node}: ${terminalSafe(n.result.renamed)}`);
          for (const w of n.result.warnings ?? []) cli.io.err(`warning: ${n.node}: ${terminalSafe(w)}`);
        } else {
          failed++;
          const info = n.state === 'cancelled' ? { code: 'INTERNAL' as const, message: n.message || 'cancelled', hint: undefined } : nodeError(n);
          if (exitCodeFor(info.code) === EXIT.REFUSED) refused++;
          cli.io.out(`${n.node}: FAILED — ${terminalSafe(info.message)}${info.hint ? ` (${terminalSafe(info.hint)})` : ''}`);
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
