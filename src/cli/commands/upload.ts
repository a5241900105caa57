// holdfast upload — send an archive to nodes, verified and resumable. Progress goes to stderr
// through one ProgressBoard (src/cli/progress.ts): a live view of one line per node on a
// terminal, plain lines in logs and CI.
import path from 'node:path';
import type { Command } from 'commander';
import type { Job, JobNodeProgress } from '../../shared/domain/jobs';
import type { Cli } from '../context';
import { helpAfter } from '../help';
import { cancelledError, followJob } from '../jobs';
import { ProgressBoard } from '../progress';
import { jobRows, nodeError, uploadResultLine } from '../transferJob';
import { cancelledWhileSending } from '../../shared/uploadText';
import { addSignatureFlags, signatureRequest, type SignatureFlags } from '../signatureFlags';

// It runs as the service's job (jobs.startUpload), in this process, as the app's upload does. The
// CLI shows the job's changes as they come and prints each node's result.

/**
 * What a cancelled upload left: the upload's own words when it got to say them (a partial file
 * kept, or nothing written), else only what its progress shows — a partial file only when bytes
 * are on the node.
 */
function cancelledUpload(n: JobNodeProgress, file: string): string {
  if (n.message && n.message !== 'cancelled') return n.message;
  return n.bytesDone > 0
    ? cancelledWhileSending(file, n.node, n.bytesDone, n.bytesTotal)
    : `the upload of ${file} to ${n.node} was cancelled before any byte of it was written there`;
}

export function registerUploadCommand(program: Command, cli: Cli): void {
  addSignatureFlags(
    program
      .command('upload')
      .summary('send an archive to a node (verified, resumable)')
      .description("Send an archive into a node's images dir: verified by SHA-256 on the node, resumable, never half-visible to k3s.")
      .argument('<node>', 'the node to send it to')
      .argument('<file>', 'the image archive on this machine')
      .option('--as <path>', 'name in the images dir (default: the file name)'),
  )
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
        job = await followJob(cli, () => cli.call('jobs.startUpload', { node: name, path: abs, ...(o.as !== undefined ? { as: o.as as string } : {}), ...signatureRequest(o as SignatureFlags) }), {
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
      cli.io.out(uploadResultLine(cli.screen(), name, n.result, job.archive.size));
    });
}
