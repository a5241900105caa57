// Reads what an image archive would give containerd (k3s imports archives with containerd's
// importer: `ImportIndex` + `client.Import(all platforms, skip missing blobs)`), in one streaming
// pass over a possibly multi-GiB, possibly compressed tar:
//   source ─▶ decompressor ─▶ tar extract ─▶ per member: keep (small metadata) or drain
// The archive may be hostile (anything in a node's images dir is read with this): every count,
// size, nesting level and the decompression ratio is bounded (src/core/limits.ts, 'archive.*'),
// and going over one is an ArchiveError 'over-limit' naming it. Details are on readArchiveIndex.
import { createHash, type Hash } from 'node:crypto';
import { finished, type Readable } from 'node:stream';
import tar, { type ExtractEvents, type Header as TarHeader } from 'tar-stream';
import { formatPlatform, platformMatches, type Platform } from '../../../shared/mediaTypes';
import { formatLimit, limit } from '../../limits';
import { normalizeReference, ReferenceError } from '../../../shared/imageReference';
import { COMPRESSION_LABEL, decompressor, sniffFormat, textStart } from './decompress';
import { ArchiveError, overLimit, type K3sImportRefusal } from './errors';
import type { ArchiveCompression } from '../../../shared/archiveSuffixes';

export { ArchiveError, type ArchiveErrorReason, type K3sImportRefusal } from './errors';

/**
 * What an ArchiveIndex says changes with this number (2: OCI ref names verbatim, as k3s names
 * them): indexes cached under another number are read again, not trusted.
 */
export const ARCHIVE_INDEX_VERSION = 2;

export interface ArchivePlatform {
  /** os/arch[/variant], or 'unknown' when neither the index nor the config says. */
  platform: string;
  /** OCI: the platform manifest's digest. docker-save: null (containerd writes the manifest). */
  manifestDigest: string | null;
  /** The image id on the node. '' only when the platform's manifest itself is missing. */
  configDigest: string;
  layers: { digest: string; size: number }[];
  /** Digests (or, docker-save, member paths) this platform needs that the archive lacks. */
  missing: string[];
}

export interface ArchiveImage {
  /**
   * The name k3s's import stores: docker-save RepoTags normalised; OCI `io.containerd.image.name`,
   * else `org.opencontainers.image.ref.name` verbatim (even a bare tag such as `1.0`). null when
   * the archive leaves the image unnamed: k3s then imports its content but creates no image.
   */
  name: string | null;
  /** OCI `org.opencontainers.image.ref.name` as written (may be a bare tag such as `1.0`). */
  refName?: string;
  /** OCI: index/manifest digest. docker-save: null (containerd computes it on import). */
  targetDigest: string | null;
  targetMediaType: string | null;
  platforms: ArchivePlatform[];
  /** OCI: the target blob itself is missing (then `platforms` is empty). */
  missing?: string[];
}

/**
 * Receives one regular file member's bytes as they stream past (direct delivery spools them to
 * disk). The tar is paused while a returned promise is pending, so a slow disk bounds memory.
 */
export interface MemberSink {
  write(chunk: Buffer): void | Promise<void>;
  /** The member ended; `digest` is its content's sha256 (checked against a blobs/sha256 name). */
  end(digest: string): void | Promise<void>;
}

export interface ArchiveIndex {
  /** null only with k3sCannotImport: the archive was not read far enough to tell. */
  format: 'docker' | 'oci' | null;
  images: ArchiveImage[];
  /** Tar members (files, directories, links; pax/long-name headers not counted). */
  members: number;
  /** The directory of `roots` the layout was found in, when not the archive's root. */
  root?: string;
  /** Size of the tar after decompression (with k3sCannotImport: as far as it was read). */
  uncompressedBytes: number;
  /**
   * Only with `unimportable: 'describe'`: k3s would import nothing from this archive, for this
   * reason. Reading stopped there (nothing was decoded past it), so `images` is empty: the
   * archive brings no image at the next k3s start.
   */
  k3sCannotImport?: K3sImportRefusal;
}

export interface ReadArchiveIndexOptions {
  compression: ArchiveCompression;
  /** Largest member kept in memory as possible metadata. Default: limit archive.jsonMemberBytes. */
  maxJsonBytes?: number;
  /** Upper bound for all kept members together. Default: limit archive.metadataBytes. */
  maxMetadataBytes?: number;
  /** Also hash blobs/sha256/* members and fail on a digest mismatch (costs one SHA-256 pass). */
  verifyBlobs?: boolean;
  /**
   * An archive k3s cannot import (a zstd window over 32 MiB): 'reject' (default) fails with an
   * ArchiveError carrying `refusal`, for archives about to be sent; 'describe' resolves with an
   * index whose `k3sCannotImport` says why, for archives already on a node. Either way it is
   * found from the frame header alone, before anything is decoded.
   */
  unimportable?: 'reject' | 'describe';
  /** Decompressed bytes read before the expansion ratio applies. Default: limit archive.expansionGraceBytes. */
  expansionGraceBytes?: number;
  signal?: AbortSignal;
  /**
   * Called for each regular file member (after every check on its header): a sink gets its bytes
   * and content digest (every member is then hashed). null skips the member.
   */
  memberSink?: (member: { path: string; size: number }) => MemberSink | null;
  /**
   * Directories the layout may sit in, tried in order (default ['']: the archive's root). A Zarf
   * package holds its OCI layout under `images/`; k3s reads only the root.
   */
  roots?: readonly string[];
}

const DEFAULT_MAX_JSON = limit('archive.jsonMemberBytes');
const DEFAULT_MAX_METADATA = limit('archive.metadataBytes');
const MAX_MEMBERS = limit('archive.members');
const MAX_NAME = limit('archive.memberNameBytes');
const MAX_NAMES = limit('archive.memberNamesBytes');
const MAX_REFERENCES = limit('archive.references');
const MAX_LAYERS = limit('archive.layersPerImage');
const MAX_INDEX_DEPTH = limit('archive.indexDepth');
const MAX_INDEX_ENTRIES = limit('archive.indexEntries');
const MAX_EXPANDED = limit('archive.expandedEntries');
const MAX_RATIO = limit('archive.expansionRatio');
const RATIO_GRACE = limit('archive.expansionGraceBytes');
const META_NAMES = new Set(['manifest.json', 'index.json', 'oci-layout', 'repositories']);
const BLOB_PATH = /^blobs\/sha256\/([a-f0-9]{64})$/;
const INDEX_TYPES = new Set(['application/vnd.oci.image.index.v1+json', 'application/vnd.docker.distribution.manifest.list.v2+json']);
const ATTESTATION_TYPE = 'vnd.docker.reference.type';
const ANNOTATION_IMAGE_NAME = 'io.containerd.image.name';
const ANNOTATION_REF_NAME = 'org.opencontainers.image.ref.name';
const OCI_LAYOUT_VERSION = '1.0.0';

const sha256hex = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

// ---- member paths ---------------------------------------------------------------------------

/** Cleans a member name (`./a//b/` → `a/b`); absolute names and any `..` are unsafe. */
function safeMemberPath(raw: string): string {
  if (raw.startsWith('/')) {
    throw new ArchiveError('unsafe-path', `unsafe path: member "${raw}" is an absolute path`, { member: raw });
  }
  const parts = raw.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) {
    throw new ArchiveError('unsafe-path', `unsafe path: member "${raw}" climbs out of the archive with ".."`, { member: raw });
  }
  return parts.join('/');
}

/** Resolves a link target (symlinks: relative to the link's directory; hardlinks: to the root). */
function safeLinkTarget(member: string, linkname: string, kind: 'symlink' | 'hardlink'): string {
  if (linkname.startsWith('/')) {
    throw new ArchiveError('unsafe-path', `unsafe path: ${kind} "${member}" points to the absolute path "${linkname}"`, { member });
  }
  const base = kind === 'symlink' ? member.split('/').slice(0, -1) : [];
  const out = [...base];
  for (const p of linkname.split('/')) {
    if (p === '' || p === '.') continue;
    if (p === '..') {
      if (out.length === 0) {
        throw new ArchiveError('unsafe-path', `unsafe path: ${kind} "${member}" points outside the archive ("${linkname}")`, { member });
      }
      out.pop();
    } else {
      out.push(p);
    }
  }
  return out.join('/');
}

// ---- collection -----------------------------------------------------------------------------

interface FileInfo {
  size: number;
  /** sha256:… — hashed, or taken from a blobs/sha256/<hex> name. */
  digest: string;
}

interface Collected {
  files: Map<string, FileInfo>;
  /** content digest → size, for every regular file. */
  digests: Map<string, number>;
  kept: Map<string, Buffer>;
  /** kept member path by content digest (hashed or named). */
  keptByDigest: Map<string, string>;
  symlinks: Map<string, string>;
  members: number;
  uncompressedBytes: number;
  /** Bytes read from the source (compressed), for the expansion ratio. */
  compressedBytes: number;
  /** Bytes of member names and link targets seen. */
  nameBytes: number;
}

/** Throws if a member name (or link target) is over the name limits; counts it otherwise. */
function checkName(col: Collected, name: string, what: string): void {
  const n = Buffer.byteLength(name);
  if (n > MAX_NAME) throw overLimit('archive.memberNameBytes', `a tar member's ${what} is ${n.toLocaleString('en-US')} bytes long`);
  col.nameBytes += n;
  if (col.nameBytes > MAX_NAMES) throw overLimit('archive.memberNamesBytes', 'the tar member names add up to more than ' + formatLimit('archive.memberNamesBytes'));
}

function looksLikeJson(chunk: Buffer): boolean | null {
  for (const c of chunk) {
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue;
    return c === 0x7b /* { */ || c === 0x5b /* [ */;
  }
  return null; // only whitespace so far
}

// ---- main entry -----------------------------------------------------------------------------

/**
 * Streams an image archive once and describes the images containerd would import from it.
 *
 * Only members that can be metadata are kept in memory: manifest.json, index.json, oci-layout,
 * repositories, *.json and JSON-looking blobs/sha256/* no larger than `maxJsonBytes`. Everything
 * else is drained, counting bytes. Metadata may come after the big blobs (docker save writes
 * manifest.json last), so nothing is resolved until the tar has ended.
 *
 * Digests: members named `blobs/sha256/<hex>` are taken at their name (as the OCI layout
 * promises; `verifyBlobs: true` hashes and checks them too). Every other regular file is hashed
 * while it streams past, because containerd digests docker-save members by content and the
 * directory name of a classic `<id>/layer.tar` is not its digest.
 *
 * The work stays linear in the input: tags of one docker-save entry share one platform list,
 * configs are hashed once, and the expansion of shared manifests and nested indexes is counted
 * against archive.expandedEntries.
 */
export function readArchiveIndex(source: Readable, opts: ReadArchiveIndexOptions): Promise<ArchiveIndex> {
  const s: MemberSettings = {
    maxJson: opts.maxJsonBytes ?? DEFAULT_MAX_JSON,
    maxMeta: opts.maxMetadataBytes ?? DEFAULT_MAX_METADATA,
    verify: opts.verifyBlobs ?? false,
    roots: opts.roots ?? [''],
    memberSink: opts.memberSink,
  };
  const grace = opts.expansionGraceBytes ?? RATIO_GRACE;
  const st = newReadState();
  const dec = decompressor(opts.compression);
  const extract = tar.extract();

  return new Promise<ArchiveIndex>((resolve, reject) => {
    let settled = false;
    const fail = (err: unknown): void => {
      if (settled) return;
      settled = true;
      opts.signal?.removeEventListener('abort', onAbort);
      stopStreams(source, dec, extract);
      if (err instanceof ArchiveError && err.refusal && opts.unimportable === 'describe') {
        resolve({ format: null, images: [], members: st.col.members, uncompressedBytes: st.col.uncompressedBytes, k3sCannotImport: err.refusal });
        return;
      }
      reject(textInstead(mapTarError(err, opts.compression, st.head, st.current), opts.compression, { raw: st.raw, rawPartial: !st.rawDone, head: st.head }));
    };
    const onAbort = (): void => fail(opts.signal?.reason ?? new Error('aborted'));
    if (opts.signal?.aborted) {
      onAbort();
      return;
    }
    opts.signal?.addEventListener('abort', onAbort, { once: true });

    extract.on('entry', (header, stream, next) => readMember(st, s, header, stream, next, fail));
    extract.on('error', fail);
    dec.on('error', fail);
    source.on('error', fail);
    finished(source, { writable: false }, (err) => {
      if (err && (err as NodeJS.ErrnoException).code === 'ERR_STREAM_PREMATURE_CLOSE') {
        fail(new ArchiveError('truncated', 'truncated: the file stream closed before the end of the archive', { cause: err }));
      }
    });
    extract.on('finish', () => {
      if (settled) return;
      try {
        if (st.col.uncompressedBytes === 0) throw new ArchiveError('truncated', 'truncated: the archive is empty');
        const index = resolveRooted(st.col, s.roots);
        settled = true;
        opts.signal?.removeEventListener('abort', onAbort);
        resolve(index);
      } catch (e) {
        fail(e);
      }
    });

    source.pipe(dec).pipe(extract as unknown as NodeJS.WritableStream);
    watchBytes(st, source, dec, opts.compression, grace, fail);
  });
}

/** What one read has seen so far, shared by its stream handlers. */
interface ReadState {
  col: Collected;
  /** Bytes of the members kept in memory. */
  keptBytes: number;
  // The first bytes as read (raw) and after decompression (head), for what a failure says.
  raw: Buffer;
  rawDone: boolean;
  head: Buffer;
  /** The member being read. */
  current: string | null;
}

function newReadState(): ReadState {
  const col: Collected = {
    files: new Map(),
    digests: new Map(),
    kept: new Map(),
    keptByDigest: new Map(),
    symlinks: new Map(),
    members: 0,
    uncompressedBytes: 0,
    compressedBytes: 0,
    nameBytes: 0,
  };
  return { col, keptBytes: 0, raw: Buffer.alloc(0), rawDone: false, head: Buffer.alloc(0), current: null };
}

function stopStreams(source: Readable, dec: ReturnType<typeof decompressor>, extract: tar.Extract): void {
  source.unpipe(dec);
  dec.unpipe(extract as unknown as NodeJS.WritableStream);
  source.destroy();
  dec.destroy();
  extract.destroy();
}

/** Counts the bytes before and after decompression and keeps the first of each; fails a bomb. */
function watchBytes(st: ReadState, source: Readable, dec: ReturnType<typeof decompressor>, compression: ArchiveCompression, grace: number, fail: (e: unknown) => void): void {
  source.on('data', (chunk: unknown) => {
    const c = chunk as Buffer;
    st.col.compressedBytes += c.length;
    if (st.raw.length < SNIFF_BYTES) st.raw = Buffer.concat([st.raw, c.subarray(0, SNIFF_BYTES - st.raw.length)]);
  });
  source.on('end', () => (st.rawDone = true));
  dec.on('data', (chunk: unknown) => {
    const c = chunk as Buffer;
    st.col.uncompressedBytes += c.length;
    if (st.head.length < SNIFF_BYTES) st.head = Buffer.concat([st.head, c.subarray(0, SNIFF_BYTES - st.head.length)]);
    const bomb = expansionError(st.col, grace, compression);
    if (bomb) fail(bomb);
  });
}

/** A bomb: reading on would cost time without end (the decompressor's memory is bounded). */
function expansionError(col: Collected, grace: number, compression: ArchiveCompression): ArchiveError | null {
  if (col.uncompressedBytes <= grace || col.uncompressedBytes <= MAX_RATIO * col.compressedBytes) return null;
  return overLimit(
    'archive.expansionRatio',
    `the ${compression} stream decompresses to more than ${MAX_RATIO.toLocaleString('en-US')} times its size (${col.uncompressedBytes.toLocaleString('en-US')} bytes from ${col.compressedBytes.toLocaleString('en-US')})`,
  );
}

/** How members are read: what may be kept as metadata, what is hashed, and who else gets the bytes. */
interface MemberSettings {
  maxJson: number;
  maxMeta: number;
  verify: boolean;
  roots: readonly string[];
  memberSink: ReadArchiveIndexOptions['memberSink'];
}

/** A tar member's byte stream. */
type TarEntry = ExtractEvents['entry'][1];

/** One member as it streams past. */
interface Member {
  path: string;
  size: number;
  isFile: boolean;
  /** The match of a `blobs/sha256/<hex>` name (under one of the roots). */
  blob: RegExpExecArray | null;
  /** Its chunks while it may be metadata; null once it cannot be. */
  chunks: Buffer[] | null;
  /** Blobs are kept only if they look like JSON: false until their first non-blank byte says. */
  sniffed: boolean;
  sink: MemberSink | null;
  hash: Hash | null;
}

/** Reads one tar member: checks its header, then keeps, hashes, sinks or drains its bytes. */
function readMember(st: ReadState, s: MemberSettings, header: TarHeader, stream: TarEntry, next: () => void, fail: (e: unknown) => void): void {
  st.col.members++;
  let path: string;
  try {
    path = checkedMemberPath(st.col, header);
  } catch (e) {
    fail(e);
    return;
  }
  st.current = path;
  const m = planMember(st, s, header, path);
  stream.on('data', (chunk: unknown) => takeChunk(m, chunk as Buffer, stream, fail));
  stream.on('error', fail);
  stream.on('end', () => endMember(st, m, next, fail));
}

/** The member's clean path, once its count, name, link target and path are within bounds and safe. */
function checkedMemberPath(col: Collected, header: TarHeader): string {
  if (col.members > MAX_MEMBERS) throw overLimit('archive.members', `the archive has more than ${formatLimit('archive.members')} tar members`);
  checkName(col, header.name, 'name');
  if (header.linkname) checkName(col, header.linkname, 'link target');
  const path = safeMemberPath(header.name);
  if (header.type === 'symlink') col.symlinks.set(path, safeLinkTarget(path, header.linkname ?? '', 'symlink'));
  // containerd ignores hard links, but one pointing outside is still a hostile archive.
  if (header.type === 'link') safeLinkTarget(path, header.linkname ?? '', 'hardlink');
  return path;
}

function planMember(st: ReadState, s: MemberSettings, header: TarHeader, path: string): Member {
  const isFile = header.type === 'file' || header.type === 'contiguous-file' || header.type == null;
  const size = header.size ?? 0;
  const rels = relativeForms(path, s.roots);
  let blob: RegExpExecArray | null = null;
  for (const r of rels) blob ??= BLOB_PATH.exec(r);
  const metaName = path.endsWith('.json') || blob !== null || rels.some((r) => META_NAMES.has(r));
  const chunks = isFile && metaName && size <= s.maxJson && st.keptBytes + size <= s.maxMeta ? [] : null;
  const sink = isFile && s.memberSink ? s.memberSink({ path, size }) : null;
  const hash = isFile && (blob === null || s.verify || sink) ? createHash('sha256') : null;
  return { path, size, isFile, blob, chunks, sniffed: blob === null, sink, hash };
}

/** One chunk of a member: hashed, handed to the sink (pausing the tar while it writes), kept. */
function takeChunk(m: Member, c: Buffer, stream: TarEntry, fail: (e: unknown) => void): void {
  m.hash?.update(c);
  if (m.sink) {
    const pending = m.sink.write(c);
    if (pending) {
      stream.pause();
      pending.then(() => stream.resume(), fail);
    }
  }
  if (m.chunks) {
    if (!m.sniffed) {
      const j = looksLikeJson(c);
      if (j === false) m.chunks = null;
      else if (j === true) m.sniffed = true;
    }
    m.chunks?.push(c);
  }
}

/** The member ended: its digest checked against a blob name, recorded, kept; the sink ended. */
function endMember(st: ReadState, m: Member, next: () => void, fail: (e: unknown) => void): void {
  st.current = null;
  if (m.isFile) {
    const hashed = m.hash ? 'sha256:' + m.hash.digest('hex') : null;
    const digest = m.blob ? 'sha256:' + m.blob[1]! : hashed!;
    if (m.blob && hashed && hashed !== digest) {
      fail(new ArchiveError('corrupt', `corrupt: blob ${m.path} does not match its digest (its content hashes to ${hashed})`, { member: m.path }));
      return;
    }
    st.col.files.set(m.path, { size: m.size, digest });
    st.col.digests.set(digest, m.size);
    if (m.chunks) {
      const data = Buffer.concat(m.chunks);
      st.keptBytes += data.length;
      st.col.kept.set(m.path, data);
      st.col.keptByDigest.set(digest, m.path);
    }
    if (m.sink) {
      Promise.resolve(m.sink.end(hashed!)).then(() => next(), fail);
      return;
    }
  }
  next();
}

/** Bytes kept of the file's start (raw and decompressed): one tar header, which always holds NULs. */
const SNIFF_BYTES = 512;

/**
 * A text file under an archive's name (an error page a failed download saved, a list, a note)
 * fails as "truncated" (shorter than a tar header) or "corrupt" (no tar header, no gzip magic):
 * neither tells the person what they have. Such a failure becomes "not an image archive", saying
 * it is text and how it starts.
 */
function textInstead(err: unknown, compression: ArchiveCompression, start: { raw: Buffer; rawPartial: boolean; head: Buffer }): unknown {
  if (!(err instanceof ArchiveError) || (err.reason !== 'truncated' && err.reason !== 'corrupt')) return err;
  const rawText = textStart(start.raw, { partial: start.rawPartial });
  if (rawText !== null) {
    const what = compression === 'none' ? 'a tar archive' : `${COMPRESSION_LABEL[compression]} data`;
    return new ArchiveError('not-an-image-archive', `not an image archive: it is not ${what}: it starts with ${rawText}`, { cause: err });
  }
  // Compressed text (`gzip notes.txt` named notes.tar.gz): the stream is fine, what it holds is not a tar.
  const plainText = compression === 'none' ? null : textStart(start.head, { partial: true });
  if (plainText !== null) {
    return new ArchiveError('not-an-image-archive', `not an image archive: the ${COMPRESSION_LABEL[compression]} stream holds no tar archive: it starts with ${plainText}`, { cause: err });
  }
  return err;
}

function mapTarError(err: unknown, compression: ArchiveCompression, head: Buffer, current: string | null): unknown {
  if (err instanceof ArchiveError || !(err instanceof Error)) return err;
  const msg = err.message;
  const inside = compression === 'none' ? 'the tar archive' : `the tar inside the ${compression} stream`;
  if (/Unexpected end of data/.test(msg)) {
    const where = current ? `in the middle of member ${current}` : 'in the middle of a tar header';
    return new ArchiveError('truncated', `truncated: ${inside} ends ${where}`, { cause: err, ...(current ? { member: current } : {}) });
  }
  if (/Invalid tar header|Invalid header|Header exceeds/.test(msg)) {
    if (sniffFormat(head) !== 'tar' && head.length > 0 && !current) {
      const actual = sniffFormat(head);
      const hint =
        actual && actual !== 'tar' ? ` (it is ${actual}-compressed, but the file name says ${compression === 'none' ? 'uncompressed' : compression})` : '';
      return new ArchiveError('corrupt', `corrupt: ${compression === 'none' ? 'this' : `the ${compression} stream`} does not contain a tar archive${hint}`, {
        cause: err,
      });
    }
    return new ArchiveError('corrupt', `corrupt: ${inside} has an invalid header${current ? ` after member ${current}` : ''}`, { cause: err });
  }
  return err;
}

// ---- roots ---------------------------------------------------------------------------------

/** `path` as seen from each root that holds it ('' holds everything). */
function relativeForms(path: string, roots: readonly string[]): string[] {
  const out: string[] = [];
  for (const root of roots) {
    if (root === '') out.push(path);
    else if (path.startsWith(root + '/')) out.push(path.slice(root.length + 1));
  }
  return out;
}

/** The members under `root`, named relative to it. */
function reroot(col: Collected, root: string): Collected {
  if (root === '') return col;
  const inside = (p: string): string | null => (p.startsWith(root + '/') ? p.slice(root.length + 1) : null);
  const out: Collected = { ...col, files: new Map(), digests: new Map(), kept: new Map(), keptByDigest: new Map(), symlinks: new Map() };
  for (const [p, info] of col.files) {
    const r = inside(p);
    if (r === null) continue;
    out.files.set(r, info);
    out.digests.set(info.digest, info.size);
    const data = col.kept.get(p);
    if (data) {
      out.kept.set(r, data);
      out.keptByDigest.set(info.digest, r);
    }
  }
  for (const [p, target] of col.symlinks) {
    const r = inside(p);
    const t = inside(target);
    if (r !== null && t !== null) out.symlinks.set(r, t);
  }
  return out;
}

/** Resolves the layout in the first of `roots` that has one (else in the first root, to say why not). */
function resolveRooted(col: Collected, roots: readonly string[]): ArchiveIndex {
  if (roots.length === 1 && roots[0] === '') return resolveIndex(col);
  const views = roots.map((root) => ({ root, view: reroot(col, root) }));
  const found = views.find(({ view }) => ['oci-layout', 'manifest.json', 'index.json'].some((f) => view.files.has(f))) ?? views[0]!;
  const index = resolveIndex(found.view);
  return found.root === '' ? index : { ...index, root: found.root };
}

// ---- resolution -----------------------------------------------------------------------------

interface Descriptor {
  mediaType?: string;
  digest: string;
  size?: number;
  platform?: Platform;
  annotations?: Record<string, string>;
}

function parseJson<T>(data: Buffer, what: string): T {
  try {
    return JSON.parse(data.toString('utf8')) as T;
  } catch (e) {
    throw new ArchiveError('corrupt', `corrupt: ${what} is not valid JSON`, { cause: e });
  }
}

function resolveIndex(col: Collected): ArchiveIndex {
  const base = { members: col.members, uncompressedBytes: col.uncompressedBytes };
  const tooLarge = (name: string): ArchiveError =>
    new ArchiveError('unsupported', `unsupported: ${name} is larger than the metadata size limit, so it was not read`, { member: name });

  let layoutVersion = '';
  if (col.files.has('oci-layout')) {
    const raw = col.kept.get('oci-layout');
    if (!raw) throw tooLarge('oci-layout');
    const layout = parseJson<unknown>(raw, 'oci-layout');
    layoutVersion = isObject(layout) ? String(layout['imageLayoutVersion'] ?? '') : '';
  }
  // Same precedence as containerd: an oci-layout with a version makes it OCI, even when a
  // manifest.json is present too (docker save since Docker 25 writes both).
  if (layoutVersion !== '') {
    if (layoutVersion !== OCI_LAYOUT_VERSION) {
      throw new ArchiveError('unsupported', `unsupported: OCI layout version ${layoutVersion} (containerd imports only ${OCI_LAYOUT_VERSION})`);
    }
    if (!col.files.has('index.json')) {
      throw new ArchiveError('not-an-image-archive', 'not an image archive: it has an oci-layout file but no index.json');
    }
    const raw = col.kept.get('index.json');
    if (!raw) throw tooLarge('index.json');
    return { format: 'oci', images: resolveOci(col, parseJson(raw, 'index.json')), ...base };
  }
  if (col.files.has('manifest.json')) {
    const raw = col.kept.get('manifest.json');
    if (!raw) throw tooLarge('manifest.json');
    return { format: 'docker', images: resolveDocker(col, parseJson(raw, 'manifest.json')), ...base };
  }
  if (col.files.has('index.json')) {
    throw new ArchiveError('not-an-image-archive', 'not an image archive: it has index.json but no oci-layout file, which containerd requires');
  }
  // An OCI archive writes its blobs first and index.json, manifest.json and oci-layout last: blobs
  // without them is such an archive cut short at a member boundary (a copy that stopped, or
  // ctr's transfer-service export: see localArchive's TRUNCATED_HINT), not some other kind of file.
  if ([...col.files.keys()].some((f) => BLOB_PATH.test(f))) {
    throw new ArchiveError('truncated', 'truncated: the archive has blobs but neither manifest.json nor index.json, as an OCI archive cut short before its last members');
  }
  throw new ArchiveError('not-an-image-archive', 'not an image archive: it has neither manifest.json nor index.json');
}

/** Platform from a config blob; undefined when it names none. */
function configPlatform(cfg: unknown): Platform | undefined {
  if (!cfg || typeof cfg !== 'object') return undefined;
  const c = cfg as { os?: unknown; architecture?: unknown; variant?: unknown };
  if (typeof c.os !== 'string' || typeof c.architecture !== 'string' || !c.os || !c.architecture) return undefined;
  return typeof c.variant === 'string' && c.variant ? { os: c.os, architecture: c.architecture, variant: c.variant } : { os: c.os, architecture: c.architecture };
}

// ---- docker save ----------------------------------------------------------------------------

interface DockerEntry {
  Config?: unknown;
  RepoTags?: unknown;
  Layers?: unknown;
}

/** Counts platform and layer records against archive.expandedEntries as the index is built. */
class ExpansionBudget {
  private used = 0;
  constructor(private readonly file: 'manifest.json' | 'index.json') {}
  spend(n: number): void {
    this.used += n;
    if (this.used > MAX_EXPANDED) {
      throw overLimit(
        'archive.expandedEntries',
        `the images ${this.file} lists expand to more than ${formatLimit('archive.expandedEntries')} platform and layer records (every tag, shared manifest and nested index counted where it is listed)`,
      );
    }
  }
}

const count = (n: number): string => n.toLocaleString('en-US');

type DockerConfig = { hex: string; platform: Platform | undefined };
type DockerLookup = (p: string) => { path: string; info: FileInfo } | null;

/** A manifest.json path as containerd resolves it: each symlink once (`path.Join(dir, linkname)`), to a regular file. */
function dockerLookup(col: Collected): DockerLookup {
  return (p) => {
    let clean: string;
    try {
      clean = safeMemberPath(p);
    } catch {
      throw new ArchiveError('unsafe-path', `unsafe path: manifest.json refers to "${p}", outside the archive`);
    }
    const direct = col.files.get(clean);
    if (direct) return { path: clean, info: direct };
    const target = col.symlinks.get(clean);
    const viaLink = target !== undefined ? col.files.get(target) : undefined;
    return viaLink ? { path: target!, info: viaLink } : null;
  };
}

/** An entry's config, hashed (and checked against a digest in its name) and parsed once per path. */
function dockerConfig(col: Collected, configs: Map<string, DockerConfig>, cfg: { path: string }, config: string, label: string): DockerConfig {
  const known = configs.get(cfg.path);
  if (known) return known;
  const cfgBytes = col.kept.get(cfg.path);
  if (!cfgBytes) throw new ArchiveError('unsupported', `unsupported: the config ${config} of ${label} is larger than the metadata size limit`);
  const hex = sha256hex(cfgBytes);
  const named = /(?:^|\/)([a-f0-9]{64})(?:\.json)?$/.exec(cfg.path)?.[1];
  if (named && named !== hex) {
    throw new ArchiveError('corrupt', `corrupt: the config ${config} of ${label} does not match its digest (it hashes to sha256:${hex})`, {
      member: cfg.path,
    });
  }
  const parsed = { hex, platform: configPlatform(parseJson(cfgBytes, `the config ${config}`)) };
  configs.set(cfg.path, parsed);
  return parsed;
}

function dockerLayers(lookup: DockerLookup, layerPaths: string[], label: string): { digest: string; size: number }[] {
  return layerPaths.map((lp) => {
    const l = lookup(lp);
    if (!l) {
      // containerd's docker-save importer fails the whole archive on a missing layer
      // (skip-missing only applies to OCI content of other platforms).
      throw new ArchiveError('missing-blob', `missing blob: layer ${lp} of ${label} is not in the archive, so containerd rejects the whole archive`);
    }
    return { digest: l.info.digest, size: l.info.size };
  });
}

/** The names containerd records for an entry's RepoTags: each normalised, or null for none. */
function dockerNames(tags: string[]): (string | null)[] {
  const names: (string | null)[] = [];
  for (const t of tags) {
    try {
      names.push(normalizeReference(t));
    } catch (err) {
      const why = err instanceof ReferenceError ? err.message : String(err);
      throw new ArchiveError('corrupt', `corrupt: manifest.json tags an image with an invalid reference (${why}), which containerd rejects`, {
        cause: err,
      });
    }
  }
  if (names.length === 0) names.push(null);
  return names;
}

function resolveDocker(col: Collected, manifest: unknown): ArchiveImage[] {
  if (!Array.isArray(manifest)) throw new ArchiveError('corrupt', 'corrupt: manifest.json is not a list of images');
  if (manifest.length > MAX_REFERENCES) throw overLimit('archive.references', `manifest.json lists ${count(manifest.length)} images`);
  const lookup = dockerLookup(col);
  // Entries may share a config: hash and parse each once.
  const configs = new Map<string, DockerConfig>();
  const budget = new ExpansionBudget('manifest.json');
  let references = 0;

  const images: ArchiveImage[] = [];
  for (const [i, raw] of manifest.entries()) {
    const e = (raw !== null && typeof raw === 'object' ? raw : {}) as DockerEntry;
    if (typeof e.Config !== 'string') throw new ArchiveError('corrupt', `corrupt: manifest.json entry ${i + 1} has no Config`);
    const tags = Array.isArray(e.RepoTags) ? e.RepoTags.filter((t): t is string => typeof t === 'string') : [];
    const layerPaths = Array.isArray(e.Layers) ? e.Layers.filter((l): l is string => typeof l === 'string') : [];
    const label = tags[0] ?? `manifest.json entry ${i + 1}`;
    references += Math.max(tags.length, 1);
    if (references > MAX_REFERENCES) throw overLimit('archive.references', `manifest.json names more than ${formatLimit('archive.references')} images (${count(references)} by entry ${i + 1})`);
    if (layerPaths.length > MAX_LAYERS) throw overLimit('archive.layersPerImage', `${label} has ${count(layerPaths.length)} layers`);
    // One record per tag, all sharing this entry's platform list: count what a copy per tag would be.
    budget.spend(Math.max(tags.length, 1) * (1 + layerPaths.length));

    const cfg = lookup(e.Config);
    if (!cfg) {
      throw new ArchiveError(
        'missing-blob',
        `missing blob: the config ${e.Config} of ${label} is not in the archive, so containerd rejects the whole archive`,
      );
    }
    const parsed = dockerConfig(col, configs, cfg, e.Config, label);
    const layers = dockerLayers(lookup, layerPaths, label);
    const platforms: ArchivePlatform[] = [
      { platform: parsed.platform ? formatPlatform(parsed.platform) : 'unknown', manifestDigest: null, configDigest: `sha256:${parsed.hex}`, layers, missing: [] },
    ];
    // containerd records one image per RepoTag; the records share one (read-only) platform list,
    // so 40,000 tags of one 40,000-layer entry cost one list, not 1.6 billion layer records.
    for (const name of dockerNames(tags)) images.push({ name, targetDigest: null, targetMediaType: null, platforms });
  }
  return images;
}

// ---- OCI layout -----------------------------------------------------------------------------

/**
 * What the resolution uses of a parsed blob. The parsed JSON itself is dropped at once: a 4 MiB
 * blob of `[{},{},…]` is ~80 MB of objects, and 16 of them used to stay alive together.
 */
interface JsonView {
  object: boolean;
  /** The blob's `manifests` (null for an entry that is no descriptor), or their count when over archive.indexEntries. */
  manifests: (Descriptor | null)[] | number | null;
  /** The blob's `layers`, or their count when over archive.layersPerImage. */
  layers: (Descriptor | null)[] | number | null;
  config: Descriptor | null;
  /** The blob read as an image config: its platform. */
  platform: Platform | undefined;
}

type BlobLookup = { state: 'ok'; view: JsonView } | { state: 'missing' } | { state: 'too-large' };

/** Annotations the resolution reads; others are not kept. */
const KEPT_ANNOTATIONS = new Set([ATTESTATION_TYPE, ANNOTATION_IMAGE_NAME, ANNOTATION_REF_NAME]);

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A descriptor as JSON gave it: an object with a string digest, else null. */
function asDescriptor(v: unknown): Descriptor | null {
  if (!isObject(v) || typeof v['digest'] !== 'string') return null;
  const d: Descriptor = { digest: v['digest'] };
  if (typeof v['mediaType'] === 'string') d.mediaType = v['mediaType'];
  if (typeof v['size'] === 'number') d.size = v['size'];
  const p = v['platform'];
  if (isObject(p) && typeof p['os'] === 'string' && typeof p['architecture'] === 'string') {
    d.platform = typeof p['variant'] === 'string' ? { os: p['os'], architecture: p['architecture'], variant: p['variant'] } : { os: p['os'], architecture: p['architecture'] };
  }
  const given = v['annotations'];
  if (isObject(given)) {
    const ann: Record<string, string> = {};
    for (const k of KEPT_ANNOTATIONS) if (typeof given[k] === 'string') ann[k] = given[k];
    d.annotations = ann;
  }
  return d;
}

function viewOf(json: unknown): JsonView {
  const o = isObject(json) ? json : null;
  const list = (v: unknown, max: number): (Descriptor | null)[] | number | null => (Array.isArray(v) ? (v.length > max ? v.length : v.map(asDescriptor)) : null);
  return {
    object: o !== null,
    manifests: list(o?.['manifests'], MAX_INDEX_ENTRIES),
    layers: list(o?.['layers'], MAX_LAYERS),
    config: asDescriptor(o?.['config']),
    platform: configPlatform(json),
  };
}

/** An index entry that is a BuildKit attestation (unknown/unknown or its reference-type annotation), not an image. */
export const isAttestation = (d: { platform?: Platform | null; annotations?: Record<string, unknown> }): boolean =>
  (d.platform?.os === 'unknown' && d.platform?.architecture === 'unknown') || d.annotations?.[ATTESTATION_TYPE] === 'attestation-manifest';

/**
 * The name k3s's import gives an index.json entry. k3s imports with containerd's client.Import
 * and no ref translator: the ref name is the image's name as written, a bare tag (`1.0`, umoci's
 * and skopeo's `oci-archive:x.tar:1.0`) included; only ctr's own import prefixes one
 * (import-<date>:1.0).
 */
export function ociImageName(annotations: Record<string, unknown> | undefined): string | null {
  const full = annotations?.[ANNOTATION_IMAGE_NAME];
  const ref = annotations?.[ANNOTATION_REF_NAME];
  return (typeof full === 'string' && full) || (typeof ref === 'string' && ref) || null;
}

const usablePlatform = (p: Platform | undefined): Platform | undefined => (p && typeof p.os === 'string' && typeof p.architecture === 'string' ? p : undefined);

function resolveOci(col: Collected, index: unknown): ArchiveImage[] {
  const manifests = (index as { manifests?: unknown } | null)?.manifests;
  if (!Array.isArray(manifests)) throw new ArchiveError('corrupt', 'corrupt: index.json has no manifests list');
  if (manifests.length > MAX_REFERENCES) throw overLimit('archive.references', `index.json lists ${count(manifests.length)} images`);
  const oci = new OciResolver(col);
  oci.planRecords(manifests);
  const images: ArchiveImage[] = [];
  for (const entry of manifests) {
    const image = oci.image(entry);
    if (image) images.push(image);
  }
  if (images.length === 0) throw new ArchiveError('not-an-image-archive', 'not an image archive: its index.json lists no images');
  const anyComplete = images.some((i) => i.platforms.some((p) => p.missing.length === 0));
  if (!anyComplete) {
    const first = images.find((i) => i.missing?.length) ?? images.find((i) => i.platforms.length > 0)!;
    const gone = first?.missing?.[0] ?? first?.platforms[0]?.missing[0] ?? 'a blob';
    throw new ArchiveError(
      'missing-blob',
      `missing blob: no image in the archive is complete (${gone}${first?.name ? ` of ${first.name}` : ''} is not in it)`,
    );
  }
  return images;
}

/** Walks an OCI layout's index.json down to its platforms, reading each blob once. */
class OciResolver {
  private readonly verified = new Map<string, BlobLookup>();
  private readonly budget = new ExpansionBudget('index.json');
  /** Records each descriptor's walk would make, by digest (planRecords). */
  private readonly sizes = new Map<string, number>();

  constructor(private readonly col: Collected) {}

  /** The image an index.json entry describes; null for an attestation. */
  image(entry: unknown): ArchiveImage | null {
    const raw = asDescriptor(entry);
    if (!raw) throw new ArchiveError('corrupt', 'corrupt: index.json has an entry without a digest');
    this.sized(raw);
    if (isAttestation(raw)) return null;
    const refName = raw.annotations?.[ANNOTATION_REF_NAME];
    const name = ociImageName(raw.annotations);
    const platforms: ArchivePlatform[] = [];
    const img: ArchiveImage = {
      name,
      targetDigest: raw.digest,
      targetMediaType: raw.mediaType ?? null,
      platforms,
    };
    if (refName !== undefined) img.refName = refName;
    if (!this.platformsOf(raw, 0, platforms)) img.missing = [raw.digest];
    return img;
  }

  /**
   * Before building anything: how many records would the walk make? Counted per distinct blob
   * (memoised), so a few kilobytes of indexes listing each other 40 times over cost 40 × 5 steps
   * to refuse, not the limit's worth of records. Errors are left to the walk itself.
   */
  planRecords(manifests: unknown[]): void {
    let planned = 0;
    for (const entry of manifests) {
      const raw = asDescriptor(entry);
      if (!raw || isAttestation(raw)) continue;
      let isIndex = raw.mediaType ? INDEX_TYPES.has(raw.mediaType) : false;
      if (!raw.mediaType) {
        try {
          const b = this.blob(raw.digest);
          isIndex = b.state === 'ok' && b.view.manifests !== null;
        } catch {
          // reported by the walk
        }
      }
      planned += this.recordsOf(raw, isIndex, 0);
      if (planned > MAX_EXPANDED) this.budget.spend(planned);
    }
  }

  private recordsOf(d: Descriptor, isIndex: boolean, depth: number): number {
    const known = this.sizes.get(d.digest);
    if (known !== undefined) return known;
    let body: JsonView | null = null;
    try {
      body = this.needJson(d.digest, 'index or manifest');
    } catch {
      // reported by the walk
    }
    let n = 1;
    if (!isIndex) {
      if (body?.object && Array.isArray(body.layers)) n += body.layers.length;
    } else if (body?.object && Array.isArray(body.manifests) && depth <= MAX_INDEX_DEPTH) {
      n = 0;
      for (const child of body.manifests) {
        if (!child || isAttestation(child)) continue;
        n += this.recordsOf(child, child.mediaType ? INDEX_TYPES.has(child.mediaType) : false, depth + 1);
        if (n > MAX_EXPANDED) break;
      }
    }
    this.sizes.set(d.digest, n);
    return n;
  }

  private blob(digest: string): BlobLookup {
    const hit = this.verified.get(digest);
    if (hit) return hit;
    let result: BlobLookup;
    const path = this.col.keptByDigest.get(digest);
    if (path !== undefined) {
      const data = this.col.kept.get(path)!;
      if ('sha256:' + sha256hex(data) !== digest) {
        throw new ArchiveError('corrupt', `corrupt: blob ${path} does not match its digest`, { member: path });
      }
      result = { state: 'ok', view: viewOf(parseJson(data, `blob ${digest}`)) };
    } else {
      result = this.col.digests.has(digest) ? { state: 'too-large' } : { state: 'missing' };
    }
    this.verified.set(digest, result);
    return result;
  }

  // A descriptor's size is the blob's (OCI image spec, "Descriptor": size MUST match): a layer
  // declared as 1 TiB for a 116-byte blob is corrupt, whichever way the archive is delivered.
  private sized(d: Descriptor): Descriptor {
    const actual = this.col.digests.get(d.digest);
    if (actual !== undefined && typeof d.size === 'number' && d.size !== actual) {
      throw new ArchiveError('corrupt', `corrupt: blob ${d.digest} is ${actual} bytes, but a descriptor says ${d.size}`);
    }
    return d;
  }

  private sizeOf(d: Descriptor): number {
    return this.col.digests.get(this.sized(d).digest) ?? (typeof d.size === 'number' ? d.size : 0);
  }

  private needJson(digest: string, what: string): JsonView | null {
    const b = this.blob(digest);
    if (b.state === 'too-large') throw new ArchiveError('unsupported', `unsupported: the ${what} ${digest} is larger than the metadata size limit`);
    return b.state === 'ok' ? b.view : null;
  }

  private platformOf(manifestDigest: string, descPlatform: Platform | undefined): ArchivePlatform {
    descPlatform = usablePlatform(descPlatform);
    const m = this.needJson(manifestDigest, 'manifest');
    if (!m?.object) {
      if (m !== null) throw new ArchiveError('corrupt', `corrupt: manifest ${manifestDigest} is not a JSON object`);
      this.budget.spend(1);
      return {
        platform: descPlatform ? formatPlatform(descPlatform) : 'unknown',
        manifestDigest,
        configDigest: '',
        layers: [],
        missing: [manifestDigest],
      };
    }
    const missing: string[] = [];
    const configDigest = m.config ? this.sized(m.config).digest : '';
    if (!configDigest) throw new ArchiveError('corrupt', `corrupt: manifest ${manifestDigest} has no config`);
    if (typeof m.layers === 'number') throw overLimit('archive.layersPerImage', `manifest ${manifestDigest} has ${count(m.layers)} layers`);
    const rawLayers = m.layers ?? [];
    this.budget.spend(1 + rawLayers.length);
    let platform = descPlatform;
    if (!this.col.digests.has(configDigest)) missing.push(configDigest);
    else if (!platform) {
      platform = this.col.keptByDigest.has(configDigest) ? this.needJson(configDigest, 'config')?.platform : undefined;
    }
    const layers = rawLayers.map((l) => {
      if (!l) throw new ArchiveError('corrupt', `corrupt: manifest ${manifestDigest} has a layer without a digest`);
      if (!this.col.digests.has(l.digest)) missing.push(l.digest);
      return { digest: l.digest, size: this.sizeOf(l) };
    });
    return { platform: platform ? formatPlatform(platform) : 'unknown', manifestDigest, configDigest, layers, missing };
  }

  /** Adds `desc`'s platforms to `out`; false when it is an index that is not in the archive. */
  private platformsOf(desc: Descriptor, depth: number, out: ArchivePlatform[]): boolean {
    const body = this.needJson(desc.digest, 'index or manifest');
    const children = body?.manifests ?? null;
    const isIndex = desc.mediaType ? INDEX_TYPES.has(desc.mediaType) : children !== null;
    if (!isIndex) {
      out.push(this.platformOf(desc.digest, desc.platform));
      return true;
    }
    if (!body) return false;
    if (depth > MAX_INDEX_DEPTH) {
      throw overLimit('archive.indexDepth', `image indexes are nested more than ${MAX_INDEX_DEPTH} deep at ${desc.digest}`);
    }
    if (typeof children === 'number') throw overLimit('archive.indexEntries', `image index ${desc.digest} lists ${count(children)} manifests`);
    for (const child of children ?? []) {
      if (!child) continue;
      this.sized(child);
      if (isAttestation(child)) continue;
      const childIsIndex = child.mediaType ? INDEX_TYPES.has(child.mediaType) : false;
      if (childIsIndex) {
        if (!this.platformsOf(child, depth + 1, out)) {
          this.budget.spend(1);
          out.push({ platform: 'unknown', manifestDigest: child.digest, configDigest: '', layers: [], missing: [child.digest] });
        }
      } else {
        out.push(this.platformOf(child.digest, child.platform));
      }
    }
    return true;
  }
}

/** Parses `os/arch[/variant]`. */
function parsePlatform(p: string): Platform | undefined {
  const [os, architecture, variant] = p.split('/');
  if (!os || !architecture) return undefined;
  return variant ? { os, architecture, variant } : { os, architecture };
}

/**
 * The image id (config digest) the node would run from `image`: the platform matching the node
 * (arm64 accepts a missing or v8 variant), else the only platform there is; null if neither.
 */
export function configDigestFor(image: ArchiveImage, platform: Platform): string | null {
  const usable = image.platforms.filter((p) => p.configDigest !== '');
  const match = usable.find((p) => platformMatches(parsePlatform(p.platform), platform));
  if (match) return match.configDigest;
  return usable.length === 1 ? usable[0]!.configDigest : null;
}
