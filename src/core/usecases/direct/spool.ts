// Reads an image archive on this machine once and spools the blobs its images use to local
// files, for direct delivery (bundle.ts says why). One pass through readArchiveIndex, which keeps
// all its bounds and hostile-archive checks; its member sink writes a member to
// `<spool>/blobs/<hex>` by the content digest it computed (a blobs/sha256/<hex> member whose bytes
// hash otherwise fails the read). The spool is a fresh 0700 directory, its files 0600; it never
// takes its disk under direct.spoolFreeBytes, and a full disk names it. Which members are written,
// and when, is on spoolBundle.
import { createReadStream, createWriteStream, statfsSync, type WriteStream } from 'node:fs';
import { mkdir, mkdtemp, open, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { once } from 'node:events';
import { ArchiveError } from '../../archives/format/errors';
import { readArchiveIndex, type ArchiveImage, type ArchiveIndex, type MemberSink } from '../../archives/format/readIndex';
import { sniffFormat, type ArchiveCompression } from '../../archives/format/decompress';
import { errnoClause, HoldfastError } from '../../errors';
import { formatBytes } from '../../../shared/format';
import { limit, nameLimit } from '../../limits';
import { archiveRefusal } from '../import/localArchive';
import type { Platform } from '../../../shared/mediaTypes';
import type { BundleBlob, BundleImage, BundleIndex, BundleKind, BundleManifest, SpooledBundle } from './bundle';
import { DOCKER_CONFIG, dockerLayerMediaType, dockerManifest } from './dockerManifest';
import { OciTrees, isObject, rawDescriptor, type BlobSource } from './ociTrees';
import { IMAGE_CONFIG_TYPES, bundleNames, haulerChunkRefusal, refuseChunkedHaul } from './sources';

export interface SpoolOptions {
  /** Directory the spool is created in (as a new 0700 sub-directory, removed by dispose). */
  dir: string;
  signal?: AbortSignal;
  /** Compressed bytes read from `file` so far, and its size. */
  onProgress?: (bytesRead: number, totalBytes: number) => void;
  /** Also gets each member of the first pass (the signature check's, #48): the archive is read once. */
  memberSink?: (member: { path: string; size: number }) => MemberSink | null;
}

const MAX_JSON = limit('archive.jsonMemberBytes');
const FREE_FLOOR = limit('direct.spoolFreeBytes');
/** containerd reads 10 bytes of a layer to tell its compression; 8 are enough for its checks. */
const HEAD_BYTES = 10;
/**
 * Members up to this size are held in memory (up to direct.heldBlobBytes in all) and written at
 * the end only if an image uses them; past the budget, in one call (no stream, no rename).
 */
const SMALL_MEMBER = 64 * 1024;
const HELD_MAX = limit('direct.heldBlobBytes');
/** Zarf keeps its images as an OCI layout here. */
export const ZARF_IMAGES = 'images';
/** Where a bundle's OCI layout may sit: the archive's root, or a Zarf package's images/. */
export const ROOTS = ['', ZARF_IMAGES] as const;
const BLOB_PATH = /^blobs\/sha256\/[a-f0-9]{64}$/;
const HEX_TAR = /^[a-f0-9]{64}\.tar$/;

const hexOf = (digest: string): string => digest.slice('sha256:'.length);

/**
 * Whether a tar member may be a blob an image uses, from its name and size alone: an OCI blob
 * (`blobs/sha256/<hex>`, also under a Zarf package's images/), a docker-save layer
 * (`<id>/layer.tar`, podman's and skopeo's `<hex>.tar`) or a JSON member no larger than
 * archive.jsonMemberBytes (configs, index.json, manifest.json). Anything else is not written.
 */
export function spoolsByName(path: string, size: number): boolean {
  for (const root of ROOTS) {
    const rel = root === '' ? path : path.startsWith(root + '/') ? path.slice(root.length + 1) : null;
    if (rel !== null && BLOB_PATH.test(rel)) return true;
  }
  const base = basename(path);
  if (base === 'layer.tar' || HEX_TAR.test(base)) return true;
  return base.endsWith('.json') && size <= MAX_JSON;
}

/** What the member sink learnt while the archive streamed past. */
interface Spooled {
  root: string;
  /** member path → content digest */
  members: Map<string, string>;
  /** content digest → size */
  sizes: Map<string, number>;
  /** content digest → first bytes */
  heads: Map<string, Buffer>;
  /** member paths seen (regular files) */
  names: Set<string>;
  /** content digest → path, of the members not spooled */
  passed: Map<string, string>;
  /** Free bytes on the spool's disk as last measured, less what was spooled since. */
  free: number;
  /** content digest → bytes, of small blobs not written yet */
  held: Map<string, Buffer>;
  heldBytes: number;
}

/** Free bytes for this user on the disk holding `dir`. */
const freeOn = (dir: string): number => {
  const st = statfsSync(dir);
  return st.bavail * st.bsize;
};

/**
 * Refuses a member that would leave the spool's disk under direct.spoolFreeBytes (measured again
 * before refusing: the estimate only counts down), else counts it as taken.
 */
function roomFor(sp: Spooled, path: string, size: number): HoldfastError | null {
  if (sp.free - size < FREE_FLOOR) sp.free = freeOn(sp.root);
  if (sp.free - size < FREE_FLOOR) {
    return new HoldfastError('REFUSED', `spooling ${path} (${formatBytes(size)}) in ${sp.root} would leave under ${nameLimit('direct.spoolFreeBytes')} free on its disk (${formatBytes(sp.free)} free)`, {
      hint: "Direct delivery spools the blobs the archive's images use before sending them: free space on that disk, or set HOLDFAST_HOME to a directory on a disk with room. Nothing was sent.",
    });
  }
  sp.free -= size;
  return null;
}

/** A write to the spool failed: name the directory (a full disk is the usual cause). */
function spoolWriteError(root: string, e: unknown): HoldfastError {
  return new HoldfastError('INTERNAL', `cannot write the spool in ${root}: ${errnoClause(e)}`, {
    hint: "Direct delivery spools the archive's blobs there before sending them: free space on that disk, or set HOLDFAST_HOME to a directory on a disk with room.",
    cause: e,
  });
}

/**
 * Streams `file` once and returns its image trees with every blob an image uses spooled under `opts.dir`.
 *
 * Only members that may be an image's blob are written (spoolsByName): the index or manifest
 * that says which blobs an image uses may come last (docker save writes manifest.json last), so
 * the name decides while the tar streams past, and a member of another name costs no disk. A
 * docker-save layer stored under an unusual name is found by its digest once the manifest is
 * read, and only then spooled, in a second pass. Small blobs (configs, manifests) are held in
 * memory up to direct.heldBlobBytes and written at the end only if an image uses them, so an
 * archive of 100,000 tiny members costs no file each.
 *
 * Sources: docker-save (the manifests containerd's importer would write are synthesised), OCI
 * layouts, Zarf packages (the OCI layout under images/) and single-chunk Hauler hauls.
 */
export async function spoolBundle(file: string, opts: SpoolOptions): Promise<SpooledBundle> {
  await refuseChunkedHaul(file).catch((e: unknown) => {
    throw archiveRefusal(file, e);
  });
  const total = (await stat(file)).size;
  const compression = await sniffCompression(file);
  await mkdir(opts.dir, { recursive: true, mode: 0o700 });
  // mkdtemp makes it 0700: the blobs of someone's images are no one else's to read.
  const root = await mkdtemp(join(opts.dir, 'spool-'));
  const dispose = (): Promise<void> => rm(root, { recursive: true, force: true });
  const open = new Set<WriteStream>();
  try {
    await mkdir(join(root, 'tmp'), { mode: 0o700 });
    await mkdir(join(root, 'blobs'), { mode: 0o700 });
    const sp: Spooled = { root, members: new Map(), sizes: new Map(), heads: new Map(), names: new Set(), passed: new Map(), free: freeOn(root), held: new Map(), heldBytes: 0 };
    const read = (wanted: ((path: string, size: number) => boolean) | null): Promise<ArchiveIndex> =>
      readAndSpool(file, total, compression, sp, open, opts, wanted).catch((e: unknown) => {
        throw archiveRefusal(file, haulerChunkRefusal(file, e) ?? e);
      });
    const index = await read(null);
    // A docker-save layer or config under a name the first pass did not spool: read it now.
    const late = lateMembers(index, sp);
    if (late.size > 0) await read((path) => late.has(path));
    const bundle = await buildBundle(index, sp, opts.signal).catch((e: unknown) => {
      throw archiveRefusal(file, e);
    });
    await rm(join(root, 'tmp'), { recursive: true, force: true });
    return { ...bundle, dispose };
  } catch (e) {
    for (const ws of open) ws.destroy();
    await dispose();
    throw e;
  }
}

/** Members a docker-save image uses that the first pass left unspooled (their names looked like no blob). */
function lateMembers(index: ArchiveIndex, sp: Spooled): Set<string> {
  const out = new Set<string>();
  if (index.format !== 'docker') return out;
  for (const img of index.images) {
    if (!img.name) continue; // untagged: containerd creates no image for it
    for (const p of img.platforms) {
      for (const digest of [p.configDigest, ...p.layers.map((l) => l.digest)]) {
        const path = sp.passed.get(digest);
        if (path !== undefined && !sp.sizes.has(digest)) out.add(path);
      }
    }
  }
  return out;
}

async function sniffCompression(file: string): Promise<ArchiveCompression> {
  const fh = await open(file, 'r');
  try {
    const head = Buffer.alloc(512);
    const { bytesRead } = await fh.read(head, 0, head.length, 0);
    const kind = sniffFormat(head.subarray(0, bytesRead));
    // Not tar and not compressed: read as tar, so readArchiveIndex says what the file is instead.
    return kind === null || kind === 'tar' ? 'none' : kind;
  } finally {
    await fh.close();
  }
}

function readAndSpool(
  file: string,
  total: number,
  compression: ArchiveCompression,
  sp: Spooled,
  open: Set<WriteStream>,
  opts: SpoolOptions,
  wanted: ((path: string, size: number) => boolean) | null,
): Promise<ArchiveIndex> {
  const source = createReadStream(file);
  let read = 0;
  if (opts.onProgress) {
    const report = opts.onProgress;
    source.on('data', (c: unknown) => {
      read += (c as Buffer).length;
      report(read, total);
    });
  }
  let n = 0;
  const memberSink = ({ path, size }: { path: string; size: number }): MemberSink => {
    sp.names.add(path);
    const also = wanted ? null : (opts.memberSink?.({ path, size }) ?? null);
    const spool = wanted ? wanted(path, size) : spoolsByName(path, size);
    if (!spool) return tee(passedSink(sp, path, wanted !== null), also);
    const full = roomFor(sp, path, size);
    if (full) return { write: () => Promise.reject(full), end: () => Promise.reject(full) };
    if (size <= SMALL_MEMBER) return tee(heldSink(sp, path, size), also);
    return tee(streamedSink(sp, path, size, join(sp.root, 'tmp', String(n++)), open), also);
  };
  return readArchiveIndex(source, {
    compression,
    verifyBlobs: true,
    roots: ROOTS,
    memberSink,
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
}

/** Both sinks get the member; a write waits only when one of them does. */
function tee(a: MemberSink, b: MemberSink | null): MemberSink {
  if (!b) return a;
  const both = (x: void | Promise<void>, y: void | Promise<void>): void | Promise<void> => (x || y ? Promise.all([x, y]).then(() => undefined) : undefined);
  return { write: (chunk) => both(b.write(chunk), a.write(chunk)), end: (digest) => both(b.end(digest), a.end(digest)) };
}

/** A member spooled: where its bytes are, by the digest readArchiveIndex computed. */
function place(sp: Spooled, path: string, size: number, digest: string, head: Buffer): void {
  sp.members.set(path, digest);
  sp.sizes.set(digest, size);
  sp.heads.set(digest, head);
}

/**
 * A member not spooled: only its digest is noted (readArchiveIndex hashes it anyway), so that a
 * docker-save image using it can have it read in a second pass.
 */
function passedSink(sp: Spooled, path: string, secondPass: boolean): MemberSink {
  return {
    write: () => undefined,
    end: (digest) => {
      if (!secondPass) sp.passed.set(digest, path);
    },
  };
}

/** A small member: held in memory while the budget lasts, else written in one call. */
function heldSink(sp: Spooled, path: string, size: number): MemberSink {
  const chunks: Buffer[] = [];
  return {
    write: (chunk) => void chunks.push(chunk),
    async end(digest) {
      const data = Buffer.concat(chunks);
      if (sp.held.has(digest)) {
        // the same bytes again
      } else if (sp.heldBytes + data.length <= HELD_MAX) {
        sp.held.set(digest, data);
        sp.heldBytes += data.length;
      } else {
        await writeFile(join(sp.root, 'blobs', hexOf(digest)), data, { mode: 0o600 }).catch((e: unknown) => {
          throw spoolWriteError(sp.root, e);
        });
      }
      place(sp, path, size, digest, data.subarray(0, HEAD_BYTES));
    },
  };
}

/** A large member: streamed into `tmp`, renamed to its digest once complete. */
function streamedSink(sp: Spooled, path: string, size: number, tmp: string, open: Set<WriteStream>): MemberSink {
  const ws = createWriteStream(tmp, { mode: 0o600 });
  open.add(ws);
  // A write error (disk full) is kept and thrown from the next write or the end, never left unheard.
  let failed: Error | null = null;
  ws.on('error', (e) => (failed ??= spoolWriteError(sp.root, e)));
  let head = Buffer.alloc(0);
  // Writes are chained: the tar may end a member while its last write still drains.
  let chain: Promise<void> = Promise.resolve();
  return {
    write(chunk) {
      if (failed) return Promise.reject(failed);
      if (head.length < HEAD_BYTES) head = Buffer.concat([head, chunk.subarray(0, HEAD_BYTES - head.length)]);
      if (ws.write(chunk)) return;
      chain = chain.then(() =>
        once(ws, 'drain').then(
          () => undefined,
          (e: unknown) => {
            throw failed ?? spoolWriteError(sp.root, e);
          },
        ),
      );
      return chain;
    },
    async end(digest) {
      await chain;
      if (!failed) ws.end();
      if (!ws.closed) await once(ws, 'close').catch((e: unknown) => (failed ??= spoolWriteError(sp.root, e)));
      open.delete(ws);
      if (failed) throw failed;
      await rename(tmp, join(sp.root, 'blobs', hexOf(digest)));
      place(sp, path, size, digest, head);
    },
  };
}

async function buildBundle(index: ArchiveIndex, sp: Spooled, signal: AbortSignal | undefined): Promise<Omit<SpooledBundle, 'dispose'>> {
  const files = new Map<string, string>();
  for (const digest of sp.sizes.keys()) files.set(digest, join(sp.root, 'blobs', hexOf(digest)));
  let kind: BundleKind;
  let images: BundleImage[];
  if (index.format === 'docker') {
    kind = 'docker';
    images = await dockerImages(index.images, sp, files);
  } else {
    const layoutRoot = index.root ?? '';
    if (layoutRoot === ZARF_IMAGES && !sp.names.has('zarf.yaml')) {
      throw new ArchiveError(
        'unsupported',
        'unsupported: the archive has an OCI layout under images/ but no zarf.yaml, so it is neither an image archive nor a Zarf package; save the images with docker save, skopeo or hauler store save',
      );
    }
    const indexDigest = sp.members.get(layoutRoot ? `${layoutRoot}/index.json` : 'index.json');
    if (!indexDigest) throw new ArchiveError('not-an-image-archive', 'not an image archive: it has no index.json');
    const blobs = blobSource(sp);
    const indexJson = await blobs.json(indexDigest, 'index.json');
    const entries = isObject(indexJson) && Array.isArray(indexJson['manifests']) ? indexJson['manifests'] : [];
    const descriptors = entries.map(rawDescriptor);
    kind = layoutRoot === ZARF_IMAGES ? 'zarf' : descriptors.some((d) => d && isHaulerKind(d.annotations?.['kind'])) ? 'hauler' : 'oci';
    images = await ociImages(kind, descriptors, blobs, signal);
  }
  images = lastNameWins(images);
  await dropUnreferenced(images, files);
  // The small blobs an image uses, written now; the others never reach the disk.
  for (const [digest, path] of files) {
    const data = sp.held.get(digest);
    if (!data) continue;
    await writeFile(path, data, { mode: 0o600 }).catch((e: unknown) => {
      throw spoolWriteError(sp.root, e);
    });
  }
  sp.held.clear();
  return { kind, images, files };
}

/**
 * A name two entries claim ends on the later one's target, as containerd's import leaves it
 * (it creates or updates image records in archive order); an image left with no name goes.
 */
function lastNameWins(images: BundleImage[]): BundleImage[] {
  const owner = new Map<string, BundleImage>();
  for (const img of images) for (const name of img.names) owner.set(name, img);
  const out: BundleImage[] = [];
  for (const img of images) {
    const names = img.names.filter((nm) => owner.get(nm) === img);
    if (names.length > 0) out.push({ ...img, names });
  }
  return out;
}

const isHaulerKind = (k: string | undefined): boolean => k !== undefined && (k.startsWith('dev.hauler/') || k.startsWith('dev.cosignproject.cosign/'));

function blobSource(sp: Spooled): BlobSource {
  const parsed = new Map<string, Promise<unknown>>();
  return {
    size: (digest) => sp.sizes.get(digest),
    json(digest, what) {
      let hit = parsed.get(digest);
      if (!hit) {
        hit = (async () => {
          const size = sp.sizes.get(digest);
          if (size === undefined) return null;
          if (size > MAX_JSON) throw new ArchiveError('unsupported', `unsupported: the ${what} ${digest} is larger than the metadata size limit`);
          const text = (sp.held.get(digest) ?? (await readFile(join(sp.root, 'blobs', hexOf(digest))))).toString('utf8');
          try {
            return JSON.parse(text) as unknown;
          } catch (e) {
            throw new ArchiveError('corrupt', `corrupt: the ${what} ${digest} is not valid JSON`, { cause: e });
          }
        })();
        parsed.set(digest, hit);
      }
      return hit;
    },
  };
}

/** One manifest per docker-save entry, written to the spool as containerd's importer writes it. */
async function dockerImages(images: ArchiveImage[], sp: Spooled, files: Map<string, string>): Promise<BundleImage[]> {
  // readArchiveIndex gives one record per tag; the tags of one entry share one platforms list.
  const entries = new Map<ArchiveImage['platforms'], string[]>();
  for (const img of images) {
    const names = entries.get(img.platforms) ?? [];
    if (img.name) names.push(img.name);
    entries.set(img.platforms, names);
  }
  const byManifest = new Map<string, BundleImage>();
  for (const [platforms, names] of entries) {
    const p = platforms[0];
    if (!p || names.length === 0) continue; // untagged: containerd creates no image for it
    const config = { digest: p.configDigest, size: sp.sizes.get(p.configDigest) ?? 0 };
    const layers: BundleBlob[] = p.layers.map((l) => ({ digest: l.digest, size: l.size, mediaType: dockerLayerMediaType(sp.heads.get(l.digest) ?? Buffer.alloc(0)) }));
    const m = dockerManifest(config, layers);
    const known = byManifest.get(m.blob.digest);
    if (known) {
      for (const n of names) if (!known.names.includes(n)) known.names.push(n);
      continue;
    }
    const file = join(sp.root, 'blobs', hexOf(m.blob.digest));
    await writeFile(file, m.bytes, { mode: 0o600 });
    files.set(m.blob.digest, file);
    const target: BundleManifest = {
      manifest: m.blob,
      platform: parsePlatform(p.platform),
      config: { ...config, mediaType: DOCKER_CONFIG },
      layers,
    };
    byManifest.set(m.blob.digest, { names: [...new Set(names)], target });
  }
  return [...byManifest.values()];
}

function parsePlatform(p: string): Platform | null {
  const [os, architecture, variant] = p.split('/');
  if (!os || !architecture || p === 'unknown') return null;
  return variant ? { os, architecture, variant } : { os, architecture };
}

/** The named entries of index.json, with their trees; entries sharing a target share one image. */
async function ociImages(kind: BundleKind, descriptors: ReturnType<typeof rawDescriptor>[], blobs: BlobSource, signal: AbortSignal | undefined): Promise<BundleImage[]> {
  const trees = new OciTrees(blobs);
  const byTarget = new Map<string, BundleImage>();
  for (const d of descriptors) {
    signal?.throwIfAborted();
    if (!d) throw new ArchiveError('corrupt', 'corrupt: index.json has an entry without a digest');
    const names = bundleNames(kind, d);
    if (names.length === 0) continue;
    const target = await trees.node(d, 0);
    if (!target) continue; // the archive lacks it: nothing to write (k3s imports nothing for it either)
    if (kind === 'hauler' && 'manifest' in target && !IMAGE_CONFIG_TYPES.has(target.config.mediaType)) continue; // a file or chart
    const key = 'index' in target ? target.index.digest : target.manifest.digest;
    const known = byTarget.get(key);
    if (known) {
      for (const n of names) if (!known.names.includes(n)) known.names.push(n);
    } else {
      byTarget.set(key, { names, target });
    }
  }
  return [...byTarget.values()];
}

/** Every digest a tree references. */
function referenced(images: BundleImage[]): Set<string> {
  const out = new Set<string>();
  const seen = new Set<BundleManifest | BundleIndex>();
  const walk = (node: BundleManifest | BundleIndex): void => {
    if (seen.has(node)) return;
    seen.add(node);
    if ('index' in node) {
      out.add(node.index.digest);
      for (const e of node.entries) {
        out.add(e.descriptor.digest);
        if (e.manifest) walk(e.manifest);
      }
    } else {
      out.add(node.manifest.digest);
      out.add(node.config.digest);
      for (const l of node.layers) out.add(l.digest);
    }
  };
  for (const img of images) walk(img.target);
  return out;
}

/** Members no image needs (index.json, a Zarf package's charts and files) leave the spool at once. */
async function dropUnreferenced(images: BundleImage[], files: Map<string, string>): Promise<void> {
  const keep = referenced(images);
  for (const [digest, path] of files) {
    if (keep.has(digest)) continue;
    files.delete(digest);
    await unlink(path).catch(() => undefined);
  }
}
