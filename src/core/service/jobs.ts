// Jobs (jobs.*): starting an import or an upload, listing and cancelling them, and the archive
// on this machine they send (local.*). The archive is read once before a job starts, so a
// refusal sends nothing; that reading's progress goes out as local.inspect events.
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { LocalArchive } from '../../shared/domain/archives';
import type { JobNodeProgress } from '../../shared/domain/jobs';
import { DEFAULT_IMPORT_PARALLEL, importOptionsProblem, type SignatureOptions } from '../../shared/importOptions';
import { holdfastHome } from '../config/home';
import { loadPolicy } from '../signatures/policy';
import { policyRules, withPolicy } from '../../shared/signaturePolicy';
import { HoldfastError } from '../errors';
import type { JobHandle } from '../jobs/manager';
import type { NodeSession } from '../node/session';
import { deliverToNodes, directSummary } from '../usecases/direct/fleet';
import { spoolBundle } from '../usecases/direct/spool';
import { importToNodes } from '../usecases/import/fleet';
import { readLocalArchive } from '../usecases/import/localArchive';
import { summary as importSummary } from '../usecases/import/run';
import { bundleSignatureSink, checkArchiveSignatures, checkArchiveVerdicts, checkBundleSignatures, keylessFlags, recordSignatures, signatureOptionsProblem, signatureSink, signatureWarnings, withoutSignatureManifests, type ArchiveSignatures } from '../usecases/import/signatures';
import { SignatureMembers } from '../signatures/archive';
import { uploadArchive } from '../usecases/upload';
import { uploadJobPatch } from '../usecases/upload/progress';
import type { HandlersOf, ServiceParts } from './parts';

type NodePatch = Partial<Omit<JobNodeProgress, 'node'>>;
type WithSession = <T>(node: string, fn: (s: NodeSession) => Promise<T>) => Promise<T>;
type Outcome<R> = { node: string; ok: true; result: R } | { node: string; ok: false; error: unknown };

type JobChannels = 'jobs.startImport' | 'jobs.startUpload' | 'jobs.list' | 'jobs.cancel' | 'local.pickArchives' | 'local.pickSignatureFiles' | 'local.inspect' | 'signatures.checkArchive';

/** How often the local inspection's progress goes out as a local.inspect event. */
const INSPECT_EVENT_MS = 100;
/** After an upload's connection dropped: how long a new one may take to say what the node kept. */
const REOPEN_TIMEOUT_MS = 5_000;

const jobArchive = (a: LocalArchive) => ({ path: a.path, size: a.size, sha256: a.sha256, format: a.format, compression: a.compression, images: a.images.length });

type Handlers = HandlersOf<JobChannels>;
type ImportRequest = Parameters<Handlers['jobs.startImport']>[0];
type UploadRequest = Parameters<Handlers['jobs.startUpload']>[0];

export function jobHandlers(parts: ServiceParts): Handlers {
  const { opts, jobs } = parts;
  return {
    'local.pickArchives': async () => {
      if (!opts.pickArchives) {
        throw new HoldfastError('INVALID_INPUT', 'there is no file dialog in the browser UI', { hint: "Type or paste the archive's full path instead." });
      }
      return { paths: await opts.pickArchives() };
    },
    'local.pickSignatureFiles': async ({ kind }) => {
      if (!opts.pickSignatureFiles) {
        throw new HoldfastError('INVALID_INPUT', 'there is no file dialog in the browser UI', { hint: `Type or paste the ${kind === 'keys' ? "public key file's" : "bundle file's"} full path instead.` });
      }
      return { paths: await opts.pickSignatureFiles(kind) };
    },
    // The same reading and verdicts as the import's, on this machine; nothing goes to a node (#48).
    'signatures.checkArchive': async ({ path: p, direct, ...sig }) => {
      const members = new SignatureMembers(path.basename(p));
      const read = await readArchive(parts, p, members);
      return { path: read.path, images: await checkArchiveVerdicts(read.path, read.index, members, sig, direct === true) };
    },
    'local.inspect': async ({ path: p }) => {
      const { index: _index, ...archive } = await readLocalArchive(p);
      return archive;
    },
    'jobs.startImport': (req) => startImport(parts, req),
    'jobs.startUpload': (req) => startUpload(parts, req),
    'jobs.list': async () => jobs.list(),
    'jobs.cancel': async ({ id }) => {
      const job = jobs.cancel(id);
      if (!job) throw new HoldfastError('NOT_FOUND', `no job ${id}`);
      return job;
    },
  };
}

/** The archive on this machine, read once; the reading's progress goes out as local.inspect events. */
function readArchive({ disposing, emit }: ServiceParts, p: string, sink?: SignatureMembers | null): ReturnType<typeof readLocalArchive> {
  let last = 0;
  return readLocalArchive(p, {
    signal: disposing,
    ...(sink ? { memberSink: sink.sink } : {}),
    onRead: (bytesRead, size) => {
      const now = Date.now();
      if (bytesRead < size && now - last < INSPECT_EVENT_MS) return;
      last = now;
      emit({ type: 'local.inspect', payload: { path: p, bytesRead, size } });
    },
  });
}

/** NOT_FOUND for a node that is not configured, before anything is read or sent. */
async function knownNodes({ store }: ServiceParts, nodes: string[]): Promise<void> {
  for (const n of nodes) await store.get(n);
}

/**
 * An import or a direct delivery on its nodes, as one job: `deliver` runs each node through the
 * pool (a node that fails shows so at once, while the others carry on) and reports progress on
 * the node's row; then each node's outcome goes there, a failure as its error, a success as
 * `done` says.
 */
async function runOnNodes<R>(
  { pool }: ServiceParts,
  job: JobHandle,
  deliver: (withSession: WithSession, onNode: (node: string, patch: NodePatch) => void) => Promise<Outcome<R>[]>,
  done: (result: R) => NodePatch,
  signatures: ArchiveSignatures | null,
): Promise<void> {
  const withSession: WithSession = (n, fn) => pool.use(n, fn).catch((e: unknown) => (job.fail(n, e), Promise.reject(e)));
  const outcomes = await deliver(withSession, (n, patch) => job.update(n, patch));
  for (const o of outcomes) {
    // What was verified goes on the images before the node counts as done (#48).
    const recorded = o.ok && signatures ? await withSession(o.node, (s) => recordSignatures(s, signatures)).then(() => null, (e: unknown) => e) : null;
    if (o.ok && recorded === null) job.update(o.node, withSignatureWarnings(done(o.result), signatures));
    else job.fail(o.node, o.ok ? recorded : o.error);
  }
}

/** The verification's warnings (renamed images, images imported unverified) on the node's result. */
function withSignatureWarnings(patch: NodePatch, signatures: ArchiveSignatures | null): NodePatch {
  const more = signatureWarnings(signatures);
  if (!more.length || !patch.result) return patch;
  return { ...patch, result: { ...patch.result, warnings: [...(patch.result.warnings ?? []), ...more] } };
}

// Validate (the nodes are known, the options agree) → complete (the archive read) → run (the job).
async function startImport(parts: ServiceParts, { nodes, path: p, pin, removeArchive, parallel, timeout, direct, policy, ...flags }: ImportRequest) {
  await knownNodes(parts, nodes);
  const sig = await withSitePolicy(parts, nodes, flags, policy);
  refuseSignatureOptions(sig);
  const problem = importOptionsProblem({ pin, removeArchive, direct });
  if (problem) {
    throw new HoldfastError('INVALID_INPUT', problem, {
      hint: direct ? 'Leave out --remove-archive: with --direct nothing lands in the images dir.' : 'Make the pins durable too ("make pins durable" in the app, --pin on the command line).',
    });
  }
  if (direct) return startDirect(parts, nodes, p, parallel, sig);
  const sink = signatureSink(p, sig);
  const read = await readArchive(parts, p, sink);
  // Verified on this machine before any node is touched: a refusal sends nothing (#48).
  const signatures = await checkArchiveSignatures(read.path, read.index, sink, sig);
  const archive = withoutSignatureManifests(read, signatures);
  // The job's options and the core's are the same names (shared/importOptions.ts).
  const options = { pin, removeArchive, ...(parallel !== undefined ? { parallel } : {}), ...(timeout !== undefined ? { timeout } : {}) };
  return parts.jobs.start(
    {
      kind: 'import',
      title: `Import ${path.basename(archive.path)} to ${nodes.length === 1 ? nodes[0] : `${nodes.length} nodes`}`,
      nodes,
      archive: jobArchive(archive),
      options,
    },
    async (job) =>
      runOnNodes(
        parts,
        job,
        (withSession, onNode) => importToNodes(nodes, withSession, parts.ctx, archive, { ...options, signal: job.signal, onNode }),
        (r) => ({
          result: {
            relPath: r.relPath,
            sha256: r.sha256,
            uploaded: r.uploaded,
            resumedFrom: r.resumedFrom,
            summary: r.skipped ?? importSummary(r),
            ...(r.renamed ? { renamed: r.renamed } : {}),
            ...(r.warnings?.length ? { warnings: r.warnings } : {}),
          },
        }),
        signatures,
      ),
  );
}

/**
 * The flags with the site policy's rules for these nodes' groups (`--policy`, else the home's
 * policy.yaml if there is one): an import applies the policy without any flag (#48).
 */
async function withSitePolicy({ opts, store }: ServiceParts, nodes: string[], flags: SignatureOptions, given: string | undefined): Promise<SignatureOptions> {
  const loaded = await loadPolicy(opts.home ?? holdfastHome(), given);
  if (!loaded) return flags;
  const groups = await Promise.all(nodes.map(async (n) => (await store.get(n)).group));
  return withPolicy(flags, policyRules(loaded.policy, groups, loaded.resolve));
}

/** --bundle, --allow-unsigned and --strict-reference mean nothing without a key or identity; keyless needs its three parts. */
function refuseSignatureOptions(o: SignatureOptions): void {
  const problem = signatureOptionsProblem(o);
  const hint = keylessFlags(o).length
    ? 'Keyless verification needs the identity, its OIDC issuer and the trusted_root.json of the Sigstore instance that signed.'
    : "Give the public key the images were signed with (cosign's .pub file).";
  if (problem) throw new HoldfastError('INVALID_INPUT', problem, { hint });
}

/**
 * Direct delivery: the archive is read into a spool on this machine first (a bad archive is
 * refused before any node is touched; its progress goes out as local.inspect events), then
 * each node gets what it lacks. The spool goes when the job ends.
 */
async function startDirect(parts: ServiceParts, nodes: string[], p: string, parallel: number | undefined, sig: SignatureOptions) {
  const { opts, pool, disposing, emit } = parts;
  const file = path.resolve(p);
  const size = await stat(file).then(
    (st) => st.size,
    (e: NodeJS.ErrnoException) => {
      throw new HoldfastError('NOT_FOUND', `cannot read ${file}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`, { hint: 'Check the path of the archive.' });
    },
  );
  // The first nodes' connections (SSH handshake, tunnel) are made while the archive is read.
  for (const n of nodes.slice(0, parallel ?? DEFAULT_IMPORT_PARALLEL)) void pool.get(n).catch(() => undefined);
  let last = 0;
  // The signatures are kept in the same read as the spool's (#48).
  const members = bundleSignatureSink(file, sig);
  const spooled = await spoolBundle(file, {
    ...(members ? { memberSink: members.sink } : {}),
    // A spool of its own (0700) under Holdfast's home, removed when the job ends (or the reading fails).
    dir: path.join(opts.home ?? holdfastHome(), 'spool'),
    signal: disposing,
    onProgress: (bytesRead, total) => {
      const now = Date.now();
      if (bytesRead < total && now - last < INSPECT_EVENT_MS) return;
      last = now;
      emit({ type: 'local.inspect', payload: { path: file, bytesRead, size: total } });
    },
  });
  // Signature tags are never delivered as images; with a key, every image is verified first (#48).
  const checked = await checkBundleSignatures(file, spooled, members, sig).catch(async (e: unknown) => {
    await spooled.dispose();
    throw e;
  });
  const bundle = { ...spooled, images: checked.images };
  const options = { pin: true, removeArchive: false, direct: true, ...(parallel !== undefined ? { parallel } : {}) };
  return parts.jobs.start(
    {
      kind: 'import',
      title: `Deliver ${path.basename(file)} to ${nodes.length === 1 ? nodes[0] : `${nodes.length} nodes`}`,
      nodes,
      archive: { path: file, size, sha256: null, format: bundle.kind === 'docker' ? 'docker' : 'oci', images: bundle.images.length },
      options,
    },
    async (job) => {
      try {
        await runOnNodes(
          parts,
          job,
          (withSession, onNode) => deliverToNodes(nodes, withSession, parts.ctx, bundle, { ...options, signal: job.signal, onNode }),
          (r) => ({
            state: 'succeeded',
            phase: 'done',
            message: directSummary(r),
            result: { relPath: '', sha256: '', uploaded: r.blobsSent > 0, resumedFrom: 0, summary: directSummary(r), ...(r.skipped.length ? { warnings: r.skipped } : {}) },
          }),
          checked.signatures,
        );
      } finally {
        await bundle.dispose();
      }
    },
  );
}

async function startUpload(parts: ServiceParts, { node, path: p, as, policy, ...flags }: UploadRequest) {
  const { pool } = parts;
  await knownNodes(parts, [node]);
  const sig = await withSitePolicy(parts, [node], flags, policy);
  refuseSignatureOptions(sig);
  const sink = signatureSink(p, sig);
  const archive = await readArchive(parts, p, sink);
  // The same checks as an import's: k3s imports what lands in the images dir (#48).
  await checkArchiveSignatures(archive.path, archive.index, sink, sig);
  // `as` is the user's choice of the name in the images dir; the core calls it remoteName
  // because the import chooses one too (usecases/import/remoteName.ts).
  const remoteName = as ?? path.basename(archive.path);
  return parts.jobs.start(
    {
      kind: 'upload',
      title: `Upload ${path.basename(archive.path)} to ${node}`,
      nodes: [node],
      archive: jobArchive(archive),
      options: { pin: false, removeArchive: false, ...(as !== undefined ? { as } : {}) },
    },
    async (job) => {
      job.update(node, { state: 'running', phase: 'checking', message: 'connecting' });
      // No second try on a fresh session when the link drops: the upload fails saying so, and
      // the same request resumes from what the node kept.
      const session = await pool.get(node);
      const r = await uploadArchive(session, archive.path, {
        remoteName,
        expectedSha256: archive.sha256,
        signal: job.signal,
        onProgress: (u) => job.update(node, { state: 'running', ...uploadJobPatch(u) }),
        onNotice: (notice) => job.update(node, { notice }),
        // After a drop, one short try on a new connection reads what the node kept.
        reopen: () => pool.get(node, { fresh: true, timeoutMs: REOPEN_TIMEOUT_MS }),
      });
      const summary = r.alreadyPresent ? `${r.relPath} was already there` : `uploaded ${r.relPath}${r.resumedFrom ? ` (resumed from byte ${r.resumedFrom})` : ''}, sha256 verified on the node`;
      job.update(node, {
        state: 'succeeded',
        phase: 'done',
        message: summary,
        result: { relPath: r.relPath, sha256: r.sha256, uploaded: !r.alreadyPresent, resumedFrom: r.resumedFrom, summary },
      });
    },
  );
}
