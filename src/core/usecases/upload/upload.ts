// Upload an image archive into a node's images dir so that k3s only ever sees it complete: the
// bytes go into a staging file k3s ignores (`.<name>.holdfast-partial`), are verified by SHA-256 on
// the node, and only then renamed onto the final name, so k3s's watcher sees one complete file.
// An archive already on a node is never overwritten (k3s would re-import it, and the images it
// brought may be in use). Writes stay inside the images dir's realpath (contain.ts). The steps,
// the sudo path and the known gaps are on uploadArchive.
import { createHash, type Hash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { FileAccess, RemoteStat, UploadArea } from '../../access';
import type { NodeSession, SessionSftp } from '../../node/session';
import { HoldfastError } from '../../errors';
import {
  formatBytes,
  normaliseSha256,
  safetyMargin,
  uploadTarget,
  type UploadTarget,
} from '../../access/paths';
import { ProgressMeter, type UploadProgress } from './progress';
import { cancelledWhileSending } from '../../../shared/uploadText';
import { checkUploadName, replacementHint } from './targetName';
import { sftpWriteFromFile, SftpWriteError } from './writeFile';
import { Containment } from './contain';
import { startFollowHash, type FollowHash } from './followHash';
import { NativeDropped, NativeUnavailable, nativeUnfit, opensshClient, removeStaleKnownHostsDirs, sendWithOpenssh } from './openssh';
import { mayNotWriteError } from '../../access/refusals';
import { unwritableFolder } from './writable';
import { assertImagesDirPath } from '../../access/imagesDirCheck';
import { logger } from '../../log';

const log = logger('upload');

export interface UploadOptions {
  /** Name relative to the images dir (may include subdirectories); default: the local basename. */
  remoteName?: string;
  /** The archive's known SHA-256 (hex, or `sha256:hex`): the local file must match it. */
  expectedSha256?: string;
  /** Cancels the upload: rejects with an Error named 'AbortError'; the staging file is kept. */
  signal?: AbortSignal;
  /** At most ~10 calls a second, plus one at each phase change and at the last byte. */
  onProgress?: (p: UploadProgress) => void;
  /**
   * Once, when an earlier run left a partial upload: whether it is resumed, and if not why
   * (0 bytes, larger than the file, not the local file's first bytes), so a re-run never starts
   * over without a word.
   */
  onNotice?: (text: string) => void;
  /** SFTP writes kept in flight (default 16). */
  inflight?: number;
  /**
   * Hash on the node only after the transfer (`sha256sum`), as before hashing while sending
   * existed: for benchmarks comparing the two, and as an escape hatch for a node whose tail
   * misbehaves. Default false.
   */
  verifyAfterSending?: boolean;
  /**
   * How the bytes travel: `auto` (default) through the machine's OpenSSH client where it can
   * carry them (openssh.ts), else SFTP on the ssh2 connection; `sftp` always SFTP.
   */
  transport?: 'auto' | 'sftp';
  /**
   * After the connection dropped: a new session to the node (it may fail, the link being down), to
   * read how much of the file the node kept, so "resume from N" says what the next run will find
   * rather than the last size this run heard of (which lags, and is 0 early on).
   */
  reopen?: () => Promise<NodeSession>;
}

export interface UploadResult {
  /** Absolute path of the archive on the node. */
  remotePath: string;
  /** Path relative to the images dir. */
  relPath: string;
  /** Hex SHA-256 of the archive, as verified on the node. */
  sha256: string;
  /** Bytes written over SFTP by this call. */
  bytesSent: number;
  /** Byte offset the upload resumed from (0: from the start). */
  resumedFrom: number;
  /** The node already held this exact archive under that name; nothing was sent. */
  alreadyPresent: boolean;
  /**
   * How the node's digest was computed: while sending (with the named program), after it
   * (`sha256sum`, or under sudo as root), or not at all this call (a resumed complete file
   * hashed by the resume check; alreadyPresent).
   */
  nodeHash: 'while-sending:openssl' | 'while-sending:sha256sum' | 'after-sending' | 'earlier';
  /** What carried the bytes of this call: the OpenSSH client, SFTP over ssh2, or nothing (none were sent). */
  transport: 'openssh' | 'sftp' | null;
}

export const DEFAULT_INFLIGHT = 16;
const LOCAL_READ_CHUNK = 1024 * 1024;

/** The Error an aborted upload rejects with (name 'AbortError'). */
export function isAbortError(err: unknown): err is Error {
  return err instanceof Error && err.name === 'AbortError';
}

const isUnreachable = (err: unknown): boolean => err instanceof HoldfastError && err.code === 'UNREACHABLE';

function abortError(message: string): Error {
  const e = new Error(message);
  e.name = 'AbortError';
  return e;
}

// --- promisified SFTP calls (ssh2 throws synchronously for unsupported extensions) -------------

function call<T>(fn: (cb: (err: Error | null | undefined, v?: T) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    try {
      fn((err, v) => (err ? reject(err) : resolve(v as T)));
    } catch (err) {
      reject(err);
    }
  });
}

const sftpOpen = (sftp: SessionSftp, p: string, flags: 'w' | 'r+') =>
  call<Buffer>((cb) => sftp.open(p, flags, { mode: 0o644 }, cb));
const sftpClose = (sftp: SessionSftp, h: Buffer) => call<void>((cb) => sftp.close(h, cb));

/** The promise, or an AbortError as soon as the signal fires. */
function abortable<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError('the upload was cancelled'));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => (signal.removeEventListener('abort', onAbort), resolve(v)),
      (e: unknown) => (signal.removeEventListener('abort', onAbort), reject(e)),
    );
  });
}

// --- local hashing -------------------------------------------------------------------------------

/** Feeds bytes [start, end) of the open local file into `hash`. */
async function hashLocalRange(fh: FileHandle, start: number, end: number, hash: Hash, signal?: AbortSignal): Promise<void> {
  const buf = Buffer.allocUnsafe(Math.min(LOCAL_READ_CHUNK, Math.max(1, end - start)));
  let pos = start;
  while (pos < end) {
    if (signal?.aborted) throw abortError('the upload was cancelled');
    const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, end - pos), pos).then(
      (r) => r,
      (err: Error) => {
        throw new HoldfastError('INVALID_INPUT', `Reading the local file failed at byte ${pos}: ${err.message}.`, { cause: err });
      },
    );
    if (bytesRead === 0) {
      throw new HoldfastError('INVALID_INPUT', `The local file ended at byte ${pos}, before its size of ${end} bytes (was it changed meanwhile?).`);
    }
    hash.update(buf.subarray(0, bytesRead));
    pos += bytesRead;
  }
}

// --- the upload ----------------------------------------------------------------------------------

/**
 * The order, and why:
 *  1. checking — write access (writable.ts): a user who may not write where the file goes is
 *     refused (REFUSED) before anything else, unless the archive is already in place.
 *     The final name: absent → go on; same size and SHA-256 → nothing to do
 *     (alreadyPresent); anything else → CONFLICT.
 *     The staging file from an earlier run: its SHA-256 on the node must equal the local hash of
 *     the same prefix → resume after it; otherwise start again from byte 0.
 *     Free space: refuse (REFUSED) before a byte is written if the file system cannot take the
 *     rest of the file plus a safety margin.
 *  2. uploading — pipelined SFTP writes into the staging file; the local SHA-256 is computed from
 *     the very chunks that are sent (no second pass). fsync@openssh.com before close when offered,
 *     so a power cut cannot leave a renamed-but-empty archive behind.
 *  3. verifying — the node's SHA-256 of the staging file must equal the local digest. As root
 *     (SFTP), the node hashes the file while it is being written (followHash.ts: from byte 0, so
 *     a resumed file is hashed prefix and appended bytes in one pass) with the fastest hasher the
 *     probe found (openssl, else sha256sum); the digest is ready about when the last write is
 *     acknowledged, while the fsync runs. If that path fails, `sha256sum -- <staging>` after the
 *     transfer.
 *  4. renaming — posix-rename@openssh.com onto the final name, after checking once more that the
 *     name is still free.
 *
 * Every node file operation goes through session.files (core/access): for a root SSH user the
 * steps above over SFTP; for a non-root user with sudo, the bytes go over SFTP into the user's own
 * ~/.holdfast-staging (resumable the same way), then `sudo -n install -o root -g root -m 0644`
 * puts them under the staging name, `sudo -n sha256sum` verifies that root-owned copy and
 * `sudo -n mv -n -T` moves it onto the final name without ever overwriting.
 *
 * Containment (contain.ts): the folder written into must resolve, on the node, inside the images
 * dir's realpath — checked before anything is looked at, just before the open, and before the
 * rename (and, under sudo, before the root-owned install): a symlinked subfolder cannot carry a
 * write elsewhere (REFUSED).
 *
 * Errors: HoldfastError throughout, except cancellation (AbortSignal), which rejects with an
 * Error whose `name` is 'AbortError' (the DOM convention `fetch` and `stream.pipeline` use);
 * the staging file is kept, so the next call resumes. A dropped connection is UNREACHABLE
 * with the byte the next run will resume from.
 *
 * Not handled: two uploads of the same name to the same node at the same time (they would share
 * the staging file; the final verification catches the mix-up, but one of them fails). Between
 * the last "is the name free" check and the rename there is a window of one round trip in which
 * another writer could create the final name; posix-rename would then replace it.
 */
export async function uploadArchive(session: NodeSession, localPath: string, opts: UploadOptions = {}): Promise<UploadResult> {
  const target = uploadTarget(session.def.imagesDir, opts.remoteName ?? path.basename(localPath));
  const expected = opts.expectedSha256 !== undefined ? normaliseSha256(opts.expectedSha256) : undefined;
  // What an upload killed mid-way (SIGKILL) left for the OpenSSH client goes now, whatever carries this one.
  try {
    removeStaleKnownHostsDirs();
  } catch (err) {
    log.debug('stale known_hosts folders not removed', { err });
  }
  const fh = await openLocal(localPath);
  const run: UploadRun = { node: session.def.name, target, resumePoint: 0, reached: { checked: false, resumable: 0, sending: false, sent: false }, total: 0 };
  let ctx: Ctx | undefined;
  try {
    ctx = await checkTarget(session, fh, localPath, run, opts, expected);
    const { files, size } = ctx;

    // 1. the final name
    const existing = await files.stat(target.remotePath, { lstat: true });
    if (existing) return await alreadyThere(ctx, existing);

    // 1b. a staging file left by an earlier run
    ctx.checkAbort();
    const { start, hash, stagingSize, notice } = await resumePointFor(ctx);
    run.resumePoint = start;
    run.reached.checked = true;
    run.reached.resumable = start;
    if (notice) {
      try {
        opts.onNotice?.(notice);
      } catch (err) {
        log.debug('notice listener failed', { node: run.node, err }); // a listener's bug must not break the upload
      }
    }

    // 1c. room for the rest
    ctx.checkAbort();
    await ensureRoom(ctx, size - start, start === 0 ? stagingSize : 0);

    // 2. upload
    ctx.checkAbort();
    const sent = await sendBytes(ctx, run, localPath, start, hash, opts);
    // 3. verify, on the node, the very copy that will be renamed
    const nodeHash = await verifyOnNode(ctx, run, start, sent);
    // 4. rename into place
    return await renameIntoPlace(ctx, { ...sent, start, nodeHash });
  } catch (err) {
    await refuseIfSwapped(ctx, run, err);
    throw await failureOf(err, session, run, opts.reopen);
  } finally {
    run.follow?.hash.stop();
    await fh.close().catch((err: unknown) => log.debug('local file not closed', { localPath, err }));
  }
}

/** How far one upload got: what its cancellation and drop messages say, and what its way out stops. */
interface UploadRun {
  node: string;
  target: UploadTarget;
  /** The byte a new run would resume from, for the "connection dropped" message. */
  resumePoint: number;
  /**
   * For what a cancellation says: the resume check done (and the bytes an earlier run left that
   * it would resume from), bytes on their way, all of them sent.
   */
  reached: { checked: boolean; resumable: number; sending: boolean; sent: boolean };
  /** The local file's size, once read: what a cancellation measures the kept bytes against. */
  total: number;
  /** The node's hash of the staging file as it is written (stopped on every way out). */
  follow?: { hash: FollowHash; hasher: 'openssl' | 'sha256sum' };
}

/** What the bytes sent came to: the local digest and, through the OpenSSH client, the node's. */
interface Sent {
  localHex: string;
  native: { localHex: string; remoteHex: string } | null;
}

function cancelMessage(run: UploadRun): string {
  const { node, reached } = run;
  const what = `The upload of ${run.target.relPath} to ${node} was cancelled`;
  if (reached.sent) return `${what} after all of it was sent; the partial file is kept, run it again to finish (nothing is sent again).`;
  if (reached.sending && run.resumePoint > 0) return cancelledWhileSending(run.target.relPath, node, run.resumePoint, run.total);
  if (reached.resumable > 0) return `${what} before anything was sent; the partial upload an earlier run left (${formatBytes(reached.resumable)}) is kept, run it again to resume.`;
  return `${what} before any byte of it was written on ${node}${reached.checked && !reached.sending ? '; there is no partial file' : ''}.`;
}

async function openLocal(localPath: string): Promise<FileHandle> {
  try {
    return await fsp.open(localPath, 'r');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new HoldfastError(
      code === 'ENOENT' ? 'NOT_FOUND' : 'INVALID_INPUT',
      `Cannot read the archive ${localPath}${code === 'ENOENT' ? ': it does not exist' : code === 'EACCES' ? ': permission denied' : `: ${(err as Error).message}`}.`,
      { cause: err },
    );
  }
}

/**
 * Step 1 up to the final name: the local file and its name, then the images dir, the user's
 * write access and the folder's containment; the context every later step works in.
 */
async function checkTarget(session: NodeSession, fh: FileHandle, localPath: string, run: UploadRun, opts: UploadOptions, expected: string | undefined): Promise<Ctx> {
  const { node, target } = run;
  const { signal } = opts;
  const st = await fh.stat();
  if (!st.isFile()) throw new HoldfastError('INVALID_INPUT', `${localPath} is not a regular file.`);
  const size = st.size;
  run.total = size;
  // A name k3s imports this archive under, with a suffix that matches its bytes: else refused here.
  for (const w of await checkUploadName(session, fh, target.relPath)) opts.onNotice?.(w);
  const meter = new ProgressMeter({ bytesTotal: size, ...(opts.onProgress ? { onProgress: opts.onProgress } : {}) });
  const checkAbort = () => {
    if (signal?.aborted) throw abortError(cancelMessage(run));
  };
  checkAbort();
  meter.setPhase('checking', 0);

  const sftp = await session.ssh.sftp();
  const files = session.files;
  // A broken images dir path (dangling link, loop, link to a file) is said as such, not as write access.
  await assertImagesDirPath(files, session.def.imagesDir, node);
  // A user who may not write there is told so now, not as a failed transfer (the network, free
  // space) once bytes move. Only an identical archive already in place needs no write.
  const blocked = files.mode === 'sftp' ? await unwritableFolder(session.ssh, target.remoteDir) : null;
  if (blocked && !(await files.stat(target.remotePath, { lstat: true }).catch(() => null))) {
    throw mayNotWriteError({ user: session.def.user, node, folder: blocked, imagesDir: session.def.imagesDir });
  }
  const area = await files.uploadArea(target);
  // Nothing is looked at, created or written through a folder that leads outside the images dir.
  const contain = new Containment(files, session.def.imagesDir, target, node);
  await contain.checkExisting();
  const ctx: Ctx = { session, sftp, files, area, contain, fh, fd: fh.fd, size, target, node, meter, checkAbort, expected, inflight: opts.inflight ?? DEFAULT_INFLIGHT };
  if (signal) ctx.signal = signal;
  if (opts.onNotice) ctx.onNotice = opts.onNotice;
  return ctx;
}

/** Step 2: bytes [start, size) into the staging file, through the OpenSSH client or over SFTP. */
async function sendBytes(ctx: Ctx, run: UploadRun, localPath: string, start: number, hash: Hash, opts: UploadOptions): Promise<Sent> {
  const { session, area, size, node } = ctx;
  await mkdirs(ctx);
  // As root the bytes land in the file that is verified and renamed: the node hashes it while it
  // grows, started once it is open (so a truncated leftover is never read).
  // A fresh upload goes through the OpenSSH client where it can (openssh.ts); else, and when
  // that client fails before the node has any of it, over SFTP below.
  let native: Sent['native'] = null;
  run.reached.sending = true;
  if (start === 0 && size > 0 && opts.transport !== 'sftp' && !opts.verifyAfterSending) {
    native = await sendNative(ctx, localPath, (n) => (run.resumePoint = n));
  }
  const tools = !native && start < size && !area.separateDir && !opts.verifyAfterSending ? await session.hashTools() : null;
  const onOpened = async () => {
    if (!tools?.follow || !tools.hasher) return;
    try {
      run.follow = { hash: await startFollowHash(session.ssh, area.writePath, size, tools.hasher), hasher: tools.hasher };
    } catch (err) {
      log.debug('hashing while sending not started; hashing afterwards', { node, err });
    }
  };
  const ackedTo = native ? size : await send(
    ctx,
    start,
    hash,
    (n) => {
      run.resumePoint = n;
      // Every byte is on the node: it hashes the rest while the fsync and close below run.
      if (n === size) run.follow?.hash.sent();
    },
    onOpened,
  );
  run.resumePoint = ackedTo;
  run.reached.sent = true;
  const localHex = native ? native.localHex : hash.digest('hex');
  if (ctx.expected && localHex !== ctx.expected) {
    await area.removeWritten().catch((err: unknown) => log.debug('partial upload not removed', { node, err }));
    throw new HoldfastError('INVALID_INPUT', `The local file ${localPath} does not have the expected SHA-256 (it has ${localHex}, expected ${ctx.expected}); nothing was installed on ${node}.`, {
      hint: 'The local copy is damaged or is another archive: fetch it again.',
    });
  }
  return { localHex, native };
}

/**
 * Step 3: the node's digest of the copy that will be renamed (under sudo: installed root-owned
 * next to the final name first) must be the local one. Skipped when the resume check already
 * hashed the complete file and nothing was copied since.
 */
async function verifyOnNode(ctx: Ctx, run: UploadRun, start: number, { localHex, native }: Sent): Promise<UploadResult['nodeHash']> {
  const { area, size, node, target } = ctx;
  ctx.checkAbort();
  // The copy about to be verified (under sudo: installed there now, as root) is reached through
  // the target's folder: resolve it again first.
  await ctx.contain.checkDir('during the upload');
  const staged = await area.stage({ timeoutMs: hashTimeout(size) });
  let nodeHash: UploadResult['nodeHash'] = 'earlier';
  if (start < size || size === 0 || staged !== area.writePath) {
    ctx.checkAbort();
    ctx.meter.setPhase('verifying', size);
    let remoteHex: string | null = null;
    const follow = run.follow;
    if (native && staged === area.writePath) {
      remoteHex = native.remoteHex;
      nodeHash = 'after-sending';
    } else if (follow && staged === area.writePath) {
      follow.hash.sent();
      remoteHex = await abortable(follow.hash.result, ctx.signal);
      follow.hash.stop();
      if (remoteHex) nodeHash = `while-sending:${follow.hasher}`;
    }
    if (!remoteHex) {
      remoteHex = await remoteSha256(ctx, staged);
      nodeHash = 'after-sending';
    }
    if (remoteHex !== localHex) {
      await area.discardStaged().catch((err: unknown) => log.debug('staged copy not discarded', { node, err }));
      await area.removeWritten().catch((err: unknown) => log.debug('mismatching copy not removed', { node, err }));
      run.resumePoint = 0;
      throw new HoldfastError('INTERNAL', `The copy of ${target.relPath} on ${node} does not match the local file (sha256 ${remoteHex} on the node, ${localHex} here); it was removed and nothing was installed.`, {
        hint: 'Run the upload again; if it keeps failing, check the node\'s disk and memory.',
      });
    }
  }
  return nodeHash;
}

/** Step 4: the verified copy onto the final name, unless someone else put a file there meanwhile. */
async function renameIntoPlace(ctx: Ctx, done: Sent & { start: number; nodeHash: UploadResult['nodeHash'] }): Promise<UploadResult> {
  const { files, area, size, node, target } = ctx;
  const { localHex, start, native } = done;
  ctx.checkAbort();
  ctx.meter.setPhase('renaming', size);
  const taken = async (st: RemoteStat) => {
    // Someone else put a file there while we were sending.
    const r = await alreadyThere(ctx, st, localHex);
    await area.discardStaged().catch((err: unknown) => log.debug('staged copy not discarded', { node, err }));
    await area.removeWritten().catch((err: unknown) => log.debug('written copy not removed', { node, err }));
    return r;
  };
  const raced = await files.stat(target.remotePath, { lstat: true });
  if (raced) return await taken(raced);
  await ctx.contain.checkDir('before the rename');
  if (!(await area.commit())) {
    const now = await files.stat(target.remotePath, { lstat: true });
    if (now) return await taken(now);
    throw new HoldfastError('INTERNAL', `${target.relPath} could not be moved into place on ${node}.`);
  }
  return { remotePath: target.remotePath, relPath: target.relPath, sha256: localHex, bytesSent: size - start, resumedFrom: start, alreadyPresent: false, nodeHash: done.nodeHash, transport: start === size ? null : native ? 'openssh' : 'sftp' };
}

/** What a failed upload rejects with, said from how far it got: never "a partial file is kept" when none was written. */
/**
 * A folder swapped for a link elsewhere while sending is the cause to report, not what a later
 * step then failed to find there (a raw SFTP "No such file"): resolve the folder again first.
 */
async function refuseIfSwapped(ctx: Ctx | undefined, run: UploadRun, err: unknown): Promise<void> {
  if (!ctx || !run.reached.sending || err instanceof HoldfastError || isAbortError(err) || ctx.session.ssh.closed) return;
  const refusal = await ctx.contain.checkDir('during the upload').then(
    () => null,
    (e: unknown) => (e instanceof HoldfastError ? e : null), // the check failing says nothing: report err
  );
  if (refusal) throw refusal;
}

async function failureOf(err: unknown, session: NodeSession, run: UploadRun, reopen: UploadOptions['reopen']): Promise<unknown> {
  if (isAbortError(err)) return abortError(cancelMessage(run));
  if (err instanceof HoldfastError && said.has(err)) return err; // already says what the node kept
  const channelGone = (err instanceof SftpWriteError && err.kind === 'closed') || (run.reached.sending && isUnreachable(err));
  if (channelGone || (session.ssh.closed && !(err instanceof HoldfastError && err.code !== 'UNREACHABLE'))) {
    // What the node holds, read on a new connection where one opens; else what this run last
    // knew the node held (acknowledged writes, sizes read on the node): never more than it has.
    const kept = run.reached.sending ? await keptAfterDrop(reopen, run.target, run.node) : null;
    return droppedError(run.node, kept ?? run.resumePoint, err);
  }
  return err;
}

interface Ctx {
  session: NodeSession;
  sftp: SessionSftp;
  files: FileAccess;
  area: UploadArea;
  contain: Containment;
  fh: FileHandle;
  fd: number;
  size: number;
  target: UploadTarget;
  node: string;
  meter: ProgressMeter;
  checkAbort: () => void;
  expected: string | undefined;
  inflight: number;
  signal?: AbortSignal;
  onNotice?: (text: string) => void;
}

/** The final name exists: identical → alreadyPresent; anything else → CONFLICT. */
async function alreadyThere(ctx: Ctx, st: RemoteStat, knownLocalHex?: string): Promise<UploadResult> {
  const { target, node, size } = ctx;
  const why = await replacementHint(ctx.session, st, size);
  const conflict = (what: string) =>
    new HoldfastError('CONFLICT', `${target.remotePath} on ${node} ${what}; Holdfast never overwrites an archive on a node.`, {
      hint: `${why} Upload under another name (--as), or remove the archive on the node first (safely: make its images' pins durable, then remove it).`,
    });
  if (st.type !== 'file') throw conflict('exists and is not a regular file');
  if (st.size !== size) throw conflict(`already holds a different file (${formatBytes(st.size)}, the local file is ${formatBytes(size)})`);
  ctx.meter.setPhase('verifying', 0);
  const local = async () => {
    if (knownLocalHex) return knownLocalHex;
    const h = createHash('sha256');
    await hashLocalRange(ctx.fh, 0, size, h, ctx.signal);
    return h.digest('hex');
  };
  const [localHex, remoteHex] = await Promise.all([local(), remoteSha256(ctx, target.remotePath)]);
  if (ctx.expected && localHex !== ctx.expected) {
    throw new HoldfastError('INVALID_INPUT', `The local file does not have the expected SHA-256 (it has ${localHex}, expected ${ctx.expected}).`, {
      hint: 'The local copy is damaged or is another archive: fetch it again.',
    });
  }
  if (localHex !== remoteHex) throw conflict(`already holds a different file of the same size (sha256 ${remoteHex}, local ${localHex})`);
  ctx.meter.setPhase('verifying', size);
  return { remotePath: target.remotePath, relPath: target.relPath, sha256: localHex, bytesSent: 0, resumedFrom: 0, alreadyPresent: true, nodeHash: 'earlier', transport: null };
}

/**
 * Where to start: after a staging file whose content is exactly the local file's prefix, else 0.
 * The returned hash has absorbed bytes [0, start) of the local file; `notice` says what became
 * of a staging file from an earlier run.
 *
 * The staging file may still be growing when it is looked at: after a dropped link the node's
 * sftp-server (or the OpenSSH client's sink) goes on writing what it had received until it sees
 * the connection gone. Those are the file's own bytes at their own offsets, but a hash taken
 * while they land covers more than the size read before it and would look like another archive
 * (a CI run started a 40 MiB upload over from byte 0 that way). So the size must read the same
 * before and after the node's hash; if it does not, wait until it settles and check again.
 */
async function resumePointFor(ctx: Ctx): Promise<{ start: number; hash: Hash; stagingSize: number; notice?: string }> {
  const { area, size, node } = ctx;
  const writtenSize = () => area.statWritten().then((st) => st?.size ?? 0);
  for (let attempt = 1; ; attempt++) {
    const st = await area.statWritten();
    if (!st) return { start: 0, hash: createHash('sha256'), stagingSize: 0 };
    if (st.type !== 'file') {
      throw new HoldfastError('CONFLICT', `${area.writePath} on ${ctx.node} exists and is not a regular file.`, { hint: 'Remove it on the node, then upload again.' });
    }
    const over = (why: string) => ({ start: 0, hash: createHash('sha256'), stagingSize: st.size, notice: `the partial upload on ${node} ${why}: starting over` });
    // A run killed before its first write was acknowledged leaves an empty file.
    if (st.size === 0) return over('was 0 bytes');
    if (st.size > size) return over(`(${formatBytes(st.size)}) is larger than the local file (${formatBytes(size)}), so it is from another archive`);
    // The staging file IS the first N bytes if the upload wrote them in order: hash both sides at once.
    const n = st.size;
    const hash = createHash('sha256');
    const [, remoteHex] = await Promise.all([hashLocalRange(ctx.fh, 0, n, hash, ctx.signal), writtenSha256(ctx)]);
    const after = await writtenSize();
    if (after !== n) {
      if (attempt === RESUME_CHECKS) return over(`kept growing while it was checked (${formatBytes(n)}, then ${formatBytes(after)}), so another upload of it may still be running`);
      log.debug('the partial upload grew while it was hashed; checking again once it settles', { node, before: n, after });
      await settled(writtenSize, ctx.signal);
      continue;
    }
    if (hash.copy().digest('hex') === remoteHex) {
      const notice =
        n === size
          ? `the partial upload on ${node} is already the whole file (${formatBytes(n)}): nothing left to send`
          : `resuming the partial upload on ${node} at ${formatBytes(n)} of ${formatBytes(size)}: it matches the local file's first ${formatBytes(n)}`;
      return { start: n, hash, stagingSize: n, notice };
    }
    return over(`(${formatBytes(n)}) does not match the local file's first ${formatBytes(n)}, so it is from another archive or the file changed since`);
  }
}

/** How many times the resume check hashes a staging file that grows meanwhile before giving up on it. */
const RESUME_CHECKS = 3;

/** sha256sum reads ~200 MB/s on modest hardware: allow 20 MB/s, at least the default 2 min. */
function hashTimeout(size: number): number {
  return Math.max(120_000, Math.ceil(size / 20_000));
}

function verifyError(ctx: Ctx, remotePath: string, err: unknown): unknown {
  if (!(err instanceof HoldfastError) || err.code === 'UNREACHABLE') return err;
  return new HoldfastError('REFUSED', `Cannot verify ${remotePath} on ${ctx.node}: ${err.message}`, {
    hint: err.hint ?? 'Holdfast needs sha256sum (coreutils or busybox) on the node.',
    cause: err,
  });
}

async function remoteSha256(ctx: Ctx, remotePath: string): Promise<string> {
  return ctx.files.sha256(remotePath, { timeoutMs: hashTimeout(ctx.size) }).catch((e: unknown) => {
    throw verifyError(ctx, remotePath, e);
  });
}

async function writtenSha256(ctx: Ctx): Promise<string> {
  return ctx.area.sha256Written({ timeoutMs: hashTimeout(ctx.size) }).catch((e: unknown) => {
    throw verifyError(ctx, ctx.area.writePath, e);
  });
}

/** The deepest existing ancestor of dir (itself included). */
async function existingAncestor(files: FileAccess, dir: string): Promise<string> {
  let d = dir;
  for (;;) {
    if (await files.stat(d)) return d;
    const up = path.posix.dirname(d);
    if (up === d) return d;
    d = up;
  }
}

async function ensureRoom(ctx: Ctx, toSend: number, freedByTruncate: number): Promise<void> {
  const { files, area } = ctx;
  const refuse = (where: string, free: number, needed: number, bytes: number) =>
    new HoldfastError(
      'REFUSED',
      `not enough free space in ${where} on ${ctx.node}: ${formatBytes(free)} free, ${formatBytes(needed)} needed (${formatBytes(bytes)} to ${where === ctx.target.remoteDir ? (area.separateDir ? 'install' : 'send') : 'send'} + ${formatBytes(needed - bytes)} safety margin)`,
      { hint: 'Free space on the node (e.g. remove archives whose images are durably pinned), or upload a smaller archive.' },
    );
  if (area.separateDir) {
    // sudo: the bytes land in the user's staging dir first, then a full copy in the images dir.
    const staging = await files.freeSpace(area.separateDir).catch((err: unknown) => (log.debug('staging dir free space unknown', { node: ctx.node, err }), null));
    if (staging) {
      const free = staging.free + freedByTruncate;
      const needed = toSend + safetyMargin(staging.total);
      if (free < needed) throw refuse(area.separateDir, free, needed, toSend);
    }
  }
  const dir = await existingAncestor(files, ctx.target.remoteDir);
  const space = await files.freeSpace(dir);
  // The node could not tell: go on; a full disk then fails the write with the node's error.
  if (!space) return;
  const bytes = area.separateDir ? ctx.size : toSend;
  const free = space.free + (area.separateDir ? 0 : freedByTruncate);
  const needed = bytes + safetyMargin(space.total);
  if (free < needed) throw refuse(ctx.target.remoteDir, free, needed, bytes);
}

async function mkdirs(ctx: Ctx): Promise<void> {
  // The images dir first (it is the root, whatever its own path resolves to), then only what is
  // missing below a folder that resolves inside it, then the folder itself, just before the open.
  await ctx.files.mkdirp(ctx.session.def.imagesDir);
  await ctx.contain.checkExisting();
  await ctx.files.mkdirp(ctx.target.remoteDir);
  await ctx.contain.checkDir('before the upload');
  await ctx.area.prepare();
}

/**
 * The whole file through the OpenSSH client (openssh.ts), the local SHA-256 read alongside;
 * null when that client cannot carry it, so the caller sends over SFTP. Then flushed with
 * fsync@openssh.com as the SFTP path does: durable before it is renamed.
 */
async function sendNative(ctx: Ctx, localPath: string, onOnNode: (n: number) => void): Promise<{ localHex: string; remoteHex: string } | null> {
  const { session, node, meter, size, area } = ctx;
  const client = opensshClient();
  const unfit = nativeUnfit(session.ssh, { sudo: Boolean(area.separateDir), client });
  const tools = unfit ? null : await session.hashTools();
  if (unfit || !tools?.hasher) {
    log.debug('sending over SFTP', { node, why: unfit ?? 'the node has no SHA-256 program' });
    return null;
  }
  meter.setPhase('uploading', 0);
  const hash = createHash('sha256');
  const local = hashLocalRange(ctx.fh, 0, size, hash, ctx.signal);
  local.catch(() => undefined);
  let remote: { sha256: string; size: number };
  try {
    remote = await sendWithOpenssh({
      client: client!,
      target: { ssh: session.ssh, hasher: tools.hasher },
      localPath,
      size,
      remotePath: area.writePath,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      poll: () => ctx.files.stat(area.writePath, { lstat: true }).then((st) => st?.size ?? null),
      onConnectionClosed: (cb) => session.ssh.onClose(cb),
      onProgress: (n) => {
        onOnNode(n);
        meter.update(Math.min(n, size));
      },
    });
  } catch (err) {
    if (isAbortError(err)) {
      meter.flush();
      const kept = await settledSize(ctx, area.writePath);
      onOnNode(kept);
      throw abortError(cancelledWhileSending(ctx.target.relPath, node, kept, size));
    }
    // The link dropped under both connections: nothing to fall back on (→ UNREACHABLE).
    if (session.ssh.closed) throw err;
    if (err instanceof NativeUnavailable) {
      // A host key other than the one verified is worth a technician's attention: the upload goes
      // on, over SFTP, on the connection that checked it.
      if (/host key/i.test(err.message)) {
        log.warn('the OpenSSH client met a host key other than the one this connection verified; the upload fell back to SFTP', { node, why: err.message });
        try {
          ctx.onNotice?.(`the OpenSSH client's connection to ${node} met another host key than the one verified: it sent nothing; the upload goes on over SFTP`);
        } catch (e) {
          log.debug('notice listener failed', { node, err: e });
        }
      } else log.info('the OpenSSH client could not send; sending over SFTP', { node, why: err.message });
      return null;
    }
    // A folder swapped for a link elsewhere while sending is the reason to report, not what the
    // node's script then failed to find.
    await ctx.contain.checkDir('during the upload');
    const kept = await settledSize(ctx, area.writePath);
    onOnNode(kept);
    if (err instanceof NativeDropped) throw droppedError(node, kept, err);
    throw new HoldfastError('REFUSED', `Sending ${ctx.target.relPath} to ${node} failed: ${(err as Error).message}; ${formatBytes(kept)} are kept there.`, {
      hint: `Check the node's free space and the network, then run the upload again to resume after the ${formatBytes(kept)} kept.`,
      cause: err,
    });
  }
  await local;
  onOnNode(remote.size);
  meter.update(size);
  meter.flush();
  const handle = await sftpOpen(ctx.sftp, area.writePath, 'r+');
  await call<unknown>((cb) => ctx.sftp.ext_openssh_fsync(handle, cb)).catch((err: unknown) => log.debug('fsync@openssh.com unavailable; renaming unsynced', { node, err }));
  await sftpClose(ctx.sftp, handle);
  return { localHex: hash.digest('hex'), remoteHex: remote.sha256 };
}

/** The dropped-connection errors made here (the way out passes them on as they are). */
const said = new WeakSet<HoldfastError>();

/** A dropped connection: resumable from `kept`, the bytes the node holds. */
function droppedError(node: string, kept: number, cause: unknown): HoldfastError {
  const from = kept > 0 ? `${formatBytes(kept)} (byte ${kept})` : 'the start (byte 0)';
  const e = new HoldfastError('UNREACHABLE', `the connection to ${node} dropped during the upload; run it again to resume from ${from}`, {
    hint: 'Check the network path to the node, then run the same upload again: the bytes already sent are kept on the node.',
    cause,
  });
  said.add(e);
  return e;
}

/** After a drop: the size of the file the upload was writing, read on a new session; null when none opens. */
async function keptAfterDrop(reopen: (() => Promise<NodeSession>) | undefined, target: UploadTarget, node: string): Promise<number | null> {
  if (!reopen) return null;
  try {
    const fresh = await reopen();
    const area = await fresh.files.uploadArea(target);
    return await settled(() => area.statWritten().then((st) => (st?.type === 'file' ? st.size : 0)));
  } catch (err) {
    log.debug('what the node kept after the drop is unknown (no new connection)', { node, err });
    return null;
  }
}

/**
 * The staging file's size once the node stopped writing it: after the OpenSSH client went away,
 * sshd still hands the writer what it had buffered (milliseconds), so the size is read until two
 * reads a quarter second apart agree (at most ~5 s), for an exact "resume from byte N".
 */
function settledSize(ctx: Ctx, p: string): Promise<number> {
  return settled(() => ctx.files.stat(p, { lstat: true }).then((st) => st?.size ?? 0, () => 0));
}

/** Reads a size until two reads a quarter second apart agree (at most ~5 s); the last read. */
async function settled(read: () => Promise<number>, signal?: AbortSignal): Promise<number> {
  let last = await read();
  for (let i = 0; i < 20 && !signal?.aborted; i++) {
    await new Promise((r) => setTimeout(r, 250));
    const now = await read();
    if (now === last) return now;
    last = now;
  }
  return last;
}

/** Sends bytes [start, size) into the staging file; returns the acknowledged end. */
async function send(ctx: Ctx, start: number, hash: Hash, onAcked: (n: number) => void, onOpened: () => Promise<void>): Promise<number> {
  const { sftp, target, node, meter, size } = ctx;
  const writePath = ctx.area.writePath;
  let handle: Buffer;
  try {
    handle = await sftpOpen(sftp, writePath, start > 0 ? 'r+' : 'w');
  } catch (err) {
    // The connection or the SFTP channel is gone: a drop, not a refusal.
    if (ctx.session.ssh.closed || isUnreachable(err)) throw err;
    throw new HoldfastError('REFUSED', `Cannot write ${writePath} on ${node}: ${(err as Error).message}.`, {
      hint: `Holdfast writes as ${ctx.session.def.user}; that user needs write access to ${ctx.area.separateDir ?? ctx.session.def.imagesDir}${ctx.area.separateDir ? '' : ' (or set the node\'s sudo option)'}.`,
      cause: err,
    });
  }
  await onOpened();
  meter.setPhase('uploading', start);
  let result;
  try {
    result = await sftpWriteFromFile(sftp, handle, writePath, {
      fd: ctx.fd,
      start,
      end: size,
      hash,
      inflight: ctx.inflight,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      onAcked: (n) => {
        onAcked(n);
        meter.update(n);
      },
    });
  } catch (err) {
    if (!ctx.session.ssh.closed) await sftpClose(sftp, handle).catch((e: unknown) => log.debug('remote handle not closed after a failed send', { node: ctx.node, err: e }));
    if (err instanceof SftpWriteError) {
      onAcked(err.ackedTo);
      if (err.kind === 'closed' || ctx.session.ssh.closed) throw err; // → UNREACHABLE in uploadArchive
      if (err.kind === 'local') throw new HoldfastError('INVALID_INPUT', `Uploading ${target.relPath} to ${node}: ${err.message}.`, { cause: err });
      throw new HoldfastError('REFUSED', `${node} refused a write to ${writePath}: ${(err.cause as Error)?.message ?? err.message}; ${formatBytes(err.ackedTo)} are kept there.`, {
        hint: `Check the node's free space and permissions, then run the upload again to resume after the ${formatBytes(err.ackedTo)} kept.`,
        cause: err,
      });
    }
    throw err;
  }
  if (result.outcome === 'aborted') {
    onAcked(result.ackedTo); // what the cancellation's message says is kept
    await sftpClose(sftp, handle).catch((err: unknown) => log.debug('remote handle not closed after cancel', { node: ctx.node, err }));
    meter.flush();
    throw abortError(cancelledWhileSending(target.relPath, node, result.ackedTo, size));
  }
  meter.update(result.ackedTo);
  meter.flush();
  // Durable before it gets its final name (a power cut must not leave a renamed, empty archive).
  await call<unknown>((cb) => sftp.ext_openssh_fsync(handle, cb)).catch((err: unknown) => log.debug('fsync@openssh.com unavailable; renaming unsynced', { node: ctx.node, err }));
  await sftpClose(sftp, handle);
  return result.ackedTo;
}
