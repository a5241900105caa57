// holdfast import — bring an air-gap archive to nodes and have k3s import it, pinning what it
// brings on request. Progress goes to stderr through one ProgressBoard (src/cli/progress.ts).
import path from 'node:path';
import type { Command } from 'commander';
import { HoldfastError } from '../../core/errors';
import type { ArgsOf } from '../../shared/contract';
import type { Job } from '../../shared/domain/jobs';
import { DEFAULT_IMPORT_PARALLEL, DEFAULT_IMPORT_TIMEOUT } from '../../shared/importOptions';
import { compressionName, plural } from '../../shared/wording';
import type { Cli } from '../context';
import { positiveInt, positiveSeconds } from '../options';
import { EXIT, exitCodeFor } from '../exit';
import { humanSize, terminalSafe } from '../format';
import { helpAfter } from '../help';
import { followJob } from '../jobs';
import { ProgressBoard } from '../progress';
import { addSignatureFlags, signatureRequest, type SignatureFlags } from '../signatureFlags';
import { importResultLine, jobRows, nodeError, withRemedyHint } from '../transferJob';

// It runs as the service's job (jobs.startImport), in this process: the
// service inspects the archive (refusing what k3s would not import before anything is sent),
// checks the options (--parallel, --timeout, --pin with --remove-archive) with the contract's
// rules, and runs the same core the app's import runs. The CLI shows the job's changes as they
// come and prints each node's result.

/** "bundle.tar.zst: oci archive, zstd, 120 MiB, 3 images, sha256 …" */
function describeArchive(a: Job['archive']): string {
  return `${path.basename(a.path)}: ${a.format} archive, ${compressionName(a.compression!)}, ${humanSize(a.size)}, ${plural(a.images ?? 0, 'image')}, sha256 ${a.sha256}`;
}

export function registerImportCommand(program: Command, cli: Cli): void {
  const command = program
    .command('import')
    .summary('the guided air-gap import of an archive to nodes')
    .description('The guided air-gap import: inspect the archive, upload it to every node, wait for k3s to import it, make the pins durable, remove the archive.')
    .argument('<nodes-and-file...>', 'one or more nodes, then the archive')
    .option('--direct', 'write the images straight into containerd, sending only the layers a node lacks (no archive on the node; pins durably)')
    .option('--pin', 'make the pins durable once k3s has imported the images')
    .option('--remove-archive', 'then remove the archive safely (needs --pin)')
    .option('--parallel <n>', 'nodes at a time', positiveInt, DEFAULT_IMPORT_PARALLEL)
    .option('--timeout <seconds>', 'how long to wait for k3s to import', positiveSeconds, DEFAULT_IMPORT_TIMEOUT);
  addSignatureFlags(command)
    .addHelpText(
      'after',
      helpAfter(
        [
          'holdfast import lab1-n1 ./nginx-1.27.tar.zst',
          'holdfast import lab1-n1 lab1-n2 ./nginx-1.27.tar.zst --pin',
          'holdfast import lab1-n1 lab1-n2 lab1-n3 ./site-bundle.tar.gz \\',
          '  --pin --remove-archive --parallel 2 --timeout 300',
          'holdfast import lab1-n1 lab1-n2 ./site-update.tar.zst --direct',
          'holdfast import lab1-n1 ./signed-layout.tar --direct --key cosign.pub',
        ],
        [
          'An archive k3s would not import is refused before anything is sent. A node that fails does not stop the others; run the same command again to retry it (what is already on a node is not sent again).',
          '--pin --remove-archive is the safe order in one go: the archive goes only once every image it brings is verified complete and durably pinned.',
          '--key verifies every image on this machine before anything is sent: each must carry a signature (in the OCI layout, or a --bundle) that verifies with a given key and signs exactly the digest written. One that does not refuses the whole archive, a line per image; --allow-unsigned imports it marked as not verified. What was verified is recorded on each image (images --json: signature).',
          "The site's signature policy (policy.yaml in Holdfast's home, or --policy FILE) applies without a flag: an image its rules cover for the nodes' groups must verify, whatever --allow-unsigned says. holdfast policy show NODE prints it.",
          'An archive holding cosign .sig tags goes only with --direct, which leaves signatures out: k3s would import them as images.',
          '--direct needs no room for the archive on the node and no k3s watcher (RKE2, plain containerd): each node is sent only the blobs it lacks, the images are unpacked and pinned durably, and every reference is read back. Zarf packages and single-file Hauler hauls work too. An interrupted run resumes where it stopped.',
        ],
      ),
    )
    .action((args: string[], o: ImportOptions) => importArchive(cli, args, o));
}

/** The options of import, as commander parses them. */
interface ImportOptions extends SignatureFlags {
  direct?: boolean;
  pin?: boolean;
  removeArchive?: boolean;
  parallel: number;
  timeout: number;
}

type ImportRequest = ArgsOf<'jobs.startImport'>;

// complete (nodes and archive from the arguments) → validate (importRequest; the service checks
// the options and the archive) → run (the service's import job, followed) → print (a line per node).
async function importArchive(cli: Cli, args: string[], o: ImportOptions): Promise<void> {
  const request = importRequest(args, o);
  const job = await runImport(cli, request);
  const { failed, refused } = printImport(cli, job, request.path);
  if (failed) {
    // A refusal is not cured by a retry alone: what to do first is on each node's line.
    const next = refused || job.nodes.some((n) => n.error?.remedy) ? 'Do what each failed line says, then run the same command again.' : 'Run the same command again to retry.';
    throw new HoldfastError(refused === failed ? 'REFUSED' : 'INTERNAL', `${failed} of ${plural(request.nodes.length, 'node')} failed; the others' work is done and kept. ${next}`);
  }
}

/** The nodes (each once) and the archive (its absolute path) the arguments name, with the options. */
function importRequest(args: string[], o: ImportOptions): ImportRequest {
  if (args.length < 2) throw new HoldfastError('INVALID_INPUT', 'give at least one node and the archive: holdfast import NODE... FILE');
  return {
    nodes: [...new Set(args.slice(0, -1))],
    path: path.resolve(args[args.length - 1]!),
    pin: Boolean(o.pin) || Boolean(o.direct),
    removeArchive: Boolean(o.removeArchive),
    parallel: o.parallel,
    timeout: o.timeout,
    ...(o.direct ? { direct: true } : {}),
    ...signatureRequest(o),
  };
}

/** The service's import job, its progress on stderr as it goes; the job as it ended. */
async function runImport(cli: Cli, request: ImportRequest): Promise<Job> {
  const board = new ProgressBoard(process.stderr);
  try {
    return await followJob(cli, () => cli.call('jobs.startImport', request), {
      file: request.path,
      board,
      err: cli.io.err,
      onStart: (j) => board.note(j.options.direct ? `${path.basename(j.archive.path)}: ${humanSize(j.archive.size)}, ${plural(j.archive.images ?? 0, 'image')}, sent straight to containerd` : describeArchive(j.archive)),
      // On a terminal every node has its line from the start; a log gets lines as things happen.
      onJob: jobRows(board, { queued: board.live, done: true }),
    });
  } finally {
    board.close();
  }
}

/** Each node's result line (notes and warnings on stderr); how many failed, and how many of those were refused. */
function printImport(cli: Cli, job: Job, file: string): { failed: number; refused: number } {
  let failed = 0;
  let refused = 0;
  const screen = cli.screen();
  const errScreen = cli.errScreen();
  for (const n of job.nodes) {
    if (n.state === 'succeeded' && n.result) {
      cli.io.out(importResultLine(screen, n.node, { result: n.result }));
      // Node-derived sentences (names, versions): one each on stderr, harmless.
      if (n.result.renamed) cli.io.err(errScreen.text(`note: ${n.node}: ${terminalSafe(n.result.renamed)}`));
      for (const w of n.result.warnings ?? []) cli.io.err(errScreen.text(`warning: ${n.node}: ${terminalSafe(w)}`));
    } else {
      failed++;
      const info = n.state === 'cancelled' ? { code: 'INTERNAL' as const, message: n.message || 'cancelled', hint: undefined } : withRemedyHint(nodeError(n), file);
      if (exitCodeFor(info.code) === EXIT.REFUSED) refused++;
      cli.io.out(importResultLine(screen, n.node, { failed: info }));
    }
  }
  return { failed, refused };
}
