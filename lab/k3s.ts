// k3s start-up emulation: the ONE place the lab mimics what k3s/RKE2 do to images
// (see docs/k3s-facts.md). Everything goes through the real `ctr` binary against the
// node's host-side socket, namespace k8s.io.
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { criImageStatus } from './cri.ts';
import { deleteImageRecord, getImageRecord, storeImageName } from './images.ts';
import { parseNamedTagged, readImportPlan, type ImportPlan } from './importPlan.ts';
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { join, relative } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { Readable } from 'node:stream';
import { sleep } from './exec.ts';
import { imagesDirOf, type LabNodeView } from './node.ts';
import type { LabDistro } from './containerd.ts';

export type Distro = LabDistro;

export const CRI_PIN_LABEL = 'io.cri-containerd.pinned';
export const PINNED = 'pinned';
export const distroPinLabel = (distro: Distro = 'k3s'): string => `io.cattle.${distro}.pinned`;

/** Supported archive suffixes, case-sensitive (longest first so `.tar.gz` is not taken for `.tar`). */
export const ARCHIVE_SUFFIXES = ['.tar.lz4', '.tar.bz2', '.tar.gz', '.tar.zst', '.tbz', '.tgz', '.tzst', '.tar'] as const;
type Decompressor = 'none' | 'gzip' | 'zstd' | 'bzip2' | 'lz4';
const SUFFIX_DECOMPRESSOR: Record<(typeof ARCHIVE_SUFFIXES)[number], Decompressor> = {
  '.tar': 'none',
  '.tar.lz4': 'lz4',
  '.tar.bz2': 'bzip2',
  '.tbz': 'bzip2',
  '.tar.gz': 'gzip',
  '.tgz': 'gzip',
  '.tar.zst': 'zstd',
  '.tzst': 'zstd',
};

export function archiveDecompressor(file: string): Decompressor | undefined {
  const s = ARCHIVE_SUFFIXES.find((suffix) => file.endsWith(suffix));
  return s ? SUFFIX_DECOMPRESSOR[s] : undefined;
}

export const isSupportedArchive = (file: string): boolean => archiveDecompressor(file) !== undefined;

/** Pre-pull lists: one image reference per line, pulled (and pinned) through CRI. */
export const PREPULL_SUFFIX = '.txt';

/** In-node path of the images dir. */
export const nodeImagesDir = (distro: Distro = 'k3s'): string => imagesDirOf(distro);

/** Host-side path of the images dir for a distro (default: the one the node is shaped as). */
export function hostImagesDirOf(node: LabNodeView, distro: Distro = node.distro): string {
  return distro === node.distro ? node.hostImagesDir : join(node.root, 'rancher', distro, 'agent', 'images');
}

export const CACHE_FILE = '.cache.json';

/**
 * How the emulated release walks the images dir at start:
 * - recursive-case-sensitive (default; k3s PR #12237 on: v1.30.13, v1.31.9, v1.32.5, v1.33.1):
 *   subfolders too, suffixes matched case-sensitively, `.cache.json` honoured;
 * - top-level-case-insensitive (older releases): the top level only, `APP.TAR.GZ` imported too,
 *   and no import cache at all (it came with the rewrite).
 */
export type StartupWalk = 'recursive-case-sensitive' | 'top-level-case-insensitive';

export interface K3sOptions {
  distro?: Distro;
  /**
   * k3s PR #14266: cache entries record `images`, and files the import cache skips have exactly
   * those names re-pinned (labels only) once at start.
   */
  cacheFix?: boolean;
  /**
   * k3s #14284 (PR #14288), for the running watcher: a file whose size is unchanged but whose
   * mtime is newer is re-imported. Default: as cacheFix — both fixes shipped in the same July
   * 2026 builds. At start, cacheFix alone decides (the two were measured together).
   */
  sameSizeFix?: boolean;
  walk?: StartupWalk;
  /** Like --airgap-extra-registry: also create reg/path:tag and reg/path@digest refs. */
  extraRegistries?: string[];
  /**
   * A pause between labelling the imported names and adding the digest (and extra-registry)
   * references: k3s adds them after its labels (PR #13221), and a slow node makes that gap long
   * enough for a client to act on the labelled names alone (issue #16's import race).
   */
  retagDelayMs?: number;
  /**
   * RKE2 only: the images it pulls at start (its runtime, and on a server the control plane's),
   * as component → reference. When the top level of its images dir holds only `.txt` and `.json`
   * files, RKE2 writes one list per component there, `<component>-image.txt` naming that
   * reference, before the walk reads the lists (docs/k3s-facts.md). None: no lists written.
   */
  rke2Images?: Record<string, string>;
}

export interface ImportedArchive {
  /** Host-side path of the archive. */
  archive: string;
  /** Path of the archive as k3s sees it inside the node. */
  nodePath: string;
  /** Image names the archive brought (as k3s's importer names them), not the added digest/extra refs. */
  images: string[];
}

/** A file whose import failed: k3s logs it, leaves it out of .cache.json and goes on. */
export interface FailedImport {
  /** Host-side path of the file. */
  archive: string;
  error: string;
  /** Names k3s had pinned before it failed (a name that is not name:tag fails retagging). */
  images?: string[];
}

const failedImport = (archive: string, e: unknown): FailedImport => ({
  archive,
  error: e instanceof Error ? e.message : String(e),
  ...(e instanceof K3sImportError ? { images: e.images } : {}),
});

export interface K3sStartReport {
  /** Archives imported and .txt lists read (images: the tags they pinned). */
  imported: ImportedArchive[];
  /** Host-side paths of files not re-imported because .cache.json matched as k3s compares. */
  skippedByCache: string[];
  /** Refs whose distro + CRI pin labels were removed by clearLabels. */
  cleared: string[];
  /** With cacheFix: the names re-pinned from the cache (recorded images of skippedByCache files). */
  repinned: string[];
  /** Files whose import failed (k3s logs and goes on); `images`: what it pinned nonetheless. */
  failed: FailedImport[];
}

/** One line of `ctr images ls`. */
export interface CtrImage {
  name: string;
  mediaType: string;
  digest: string;
  labels: Record<string, string>;
}

// ---------------------------------------------------------------------------------------------
// ctr helpers

function parseLabels(field: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (field === '-' || field === '') return out;
  // A value may hold commas and spaces (Holdfast's signature reason: "signed, but not by …"):
  // a comma starts the next label only where a key and its `=` follow.
  for (const kv of field.split(/,(?=[^\s,=]+=)/)) {
    const eq = kv.indexOf('=');
    if (eq < 0) out[kv] = '';
    else out[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return out;
}

/**
 * Parses `ctr images ls` (REF TYPE DIGEST SIZE PLATFORMS LABELS; SIZE is two words like
 * "2.1 KiB", LABELS is the last column, `-` when empty, else k=v joined by commas). LABELS is
 * the rest of the line: a value may hold spaces.
 */
export function parseCtrImagesLs(text: string): CtrImage[] {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const out: CtrImage[] = [];
  for (const line of lines.slice(1)) {
    const t = line.trim().split(/\s+/);
    if (t.length < 6) continue;
    // More than REF TYPE DIGEST SIZE (two words) PLATFORMS LABELS: a label value holds spaces.
    const rest = t.length > 7 ? /^(?:\S+\s+){6}(.*)$/.exec(line.trim())![1]! : t[t.length - 1]!;
    out.push({ name: t[0]!, mediaType: t[1]!, digest: t[2]!, labels: parseLabels(rest) });
  }
  return out;
}

/** Go-style quoted filter value, so references with `@`, `:` or `/` are taken literally. */
const quoteFilter = (v: string): string => JSON.stringify(v);

export async function listImages(node: LabNodeView, filters: string[] = []): Promise<CtrImage[]> {
  return parseCtrImagesLs(await node.ctr(['images', 'ls', ...filters]));
}

/** A ref's labels (via `ctr images ls name==ref`). Throws if the ref does not exist. */
export async function labelsOf(node: LabNodeView, ref: string): Promise<Record<string, string>> {
  const found = (await listImages(node, [`name==${quoteFilter(ref)}`])).find((i) => i.name === ref);
  if (!found) throw new Error(`${node.name}: no image ref ${ref}`);
  return found.labels;
}

/** Sets (value) or deletes (empty value: `ctr images label ref key=` deletes the key) labels. */
async function setLabels(node: LabNodeView, ref: string, labels: Record<string, string>): Promise<void> {
  await node.ctr(['images', 'label', ref, ...Object.entries(labels).map(([k, v]) => `${k}=${v}`)]);
}

// ---------------------------------------------------------------------------------------------
// Archive inspection: exactly which names k3s's importer creates (see importPlan.ts).

export { normalizeDockerRef, parseNamedTagged } from './importPlan.ts';

/** Repository part of a reference (no tag, no digest). */
export function repositoryOf(ref: string): string {
  const at = ref.indexOf('@');
  const base = at >= 0 ? ref.slice(0, at) : ref;
  const colon = base.lastIndexOf(':');
  return colon > base.lastIndexOf('/') ? base.slice(0, colon) : base;
}

/**
 * The names k3s's importer creates for an uncompressed archive: docker-save → each RepoTag
 * normalised; OCI layout → each index.json entry's `io.containerd.image.name`, else its
 * `org.opencontainers.image.ref.name` verbatim (a bare tag stays a bare tag); else none.
 */
export async function archiveImageNames(tarFile: string): Promise<string[]> {
  return (await readImportPlan(tarFile)).names;
}

// ---------------------------------------------------------------------------------------------
// Decompression (to a temp tar in the node root, never in the images dir)

async function decompressTo(src: string, how: Decompressor, dest: string): Promise<void> {
  if (how === 'gzip') {
    await pipeline(createReadStream(src), createGunzip(), createWriteStream(dest));
    return;
  }
  const argv: Record<Exclude<Decompressor, 'none' | 'gzip'>, string[]> = {
    // k3s decodes zstd with a 32 MiB window limit (klauspost WithDecoderMaxMemory(1<<25)): so does the lab
    zstd: ['zstd', '-d', '-q', '-c', '-M32MB', '--', src],
    bzip2: ['bzip2', '-d', '-c', '--', src],
    lz4: ['lz4', '-d', '-q', '-c', src],
  };
  const [cmd, ...args] = argv[how as 'zstd' | 'bzip2' | 'lz4'];
  const child = spawn(cmd!, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const err: Buffer[] = [];
  child.stderr.on('data', (d: Buffer) => err.push(d));
  const exit = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  await pipeline(child.stdout as Readable, createWriteStream(dest));
  const code = await exit;
  if (code !== 0) throw new Error(`${cmd} -d ${src}: ${Buffer.concat(err).toString('utf8').trim() || `exit ${code}`}`);
}

// ---------------------------------------------------------------------------------------------
// Serialisation per node (start emulation and watcher never import concurrently)

const locks = new Map<string, Promise<unknown>>();
function withNodeLock<T>(node: LabNodeView, fn: () => Promise<T>): Promise<T> {
  const prev = locks.get(node.root) ?? Promise.resolve();
  const next = prev.then(fn, fn);
  locks.set(
    node.root,
    next.catch(() => undefined),
  );
  return next;
}

// ---------------------------------------------------------------------------------------------
// Steps

/** Step 1: remove both pin labels from every image carrying the distro label. */
export async function clearLabels(node: LabNodeView, distro: Distro = node.distro): Promise<string[]> {
  const label = distroPinLabel(distro);
  const refs = (await node.ctr(['images', 'ls', '-q', `labels.${quoteFilter(label)}==${PINNED}`]))
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  for (const ref of refs) await setLabels(node, ref, { [label]: '', [CRI_PIN_LABEL]: '' });
  return refs;
}

/**
 * Step 3 for a set of names, as k3s's labelImages then retagImages: both pin labels on every
 * name, then for each name that parses as name:tag (parseNamedTagged) a
 * `<repository>@sha256:<target>` ref, plus reg/path:tag and reg/path@digest for each extra
 * registry. A name that does not parse is pinned but gets no refs (retagImages' error: see
 * retagErrors). Returns every ref it pinned.
 */
export async function pinImages(node: LabNodeView, names: string[], opts: K3sOptions = {}): Promise<string[]> {
  if (names.length === 0) return [];
  const labels = { [distroPinLabel(opts.distro ?? node.distro)]: PINNED, [CRI_PIN_LABEL]: PINNED };
  const existing = new Map((await listImages(node)).map((i) => [i.name, i]));
  const pinned: string[] = [];
  const ensureRef = async (src: string, ref: string, digest: string): Promise<void> => {
    const cur = existing.get(ref);
    // ctr 1.x `images tag` copies the source's labels, 2.x does not; k3s labels the new ref
    // itself, so the lab does too.
    if (!cur || cur.digest !== digest) await node.ctr(['images', 'tag', ...(cur ? ['--force'] : []), src, ref]);
    await setLabels(node, ref, labels);
    pinned.push(ref);
  };
  const present = names.filter((n) => existing.has(n));
  // labelImages runs over every image before retagImages runs over any
  for (const name of present) {
    await setLabels(node, name, labels);
    pinned.push(name);
  }
  if (opts.retagDelayMs) await sleep(opts.retagDelayMs);
  for (const name of present) {
    const digest = existing.get(name)!.digest;
    const parsed = parseNamedTagged(name);
    if ('error' in parsed) continue;
    const repo = parsed.repository;
    if (`${repo}@${digest}` !== name) await ensureRef(name, `${repo}@${digest}`, digest);
    const path = repo.slice(repo.indexOf('/') + 1); // docker.Path: the repository without its domain
    // With the digest reference, k3s (PR #13221) labels the image's content with where it is
    // distributed from, which its embedded registry needs: the target blob here.
    await node.ctr(['content', 'label', digest, `containerd.io/distribution.source.${repo.slice(0, repo.indexOf('/'))}=${path}`]);
    for (const reg of opts.extraRegistries ?? []) {
      await ensureRef(name, `${reg}/${path}:${parsed.tag}`, digest);
      await ensureRef(name, `${reg}/${path}@${digest}`, digest);
    }
  }
  return pinned;
}

/** retagImages' errors for `names` (k3s returns them all, joined, after labelling): '' when none. */
export function retagErrors(names: string[]): string {
  const errs = names.flatMap((n) => {
    const p = parseNamedTagged(n);
    return 'error' in p ? [`failed to parse tag for image ${n}: ${p.error}`] : [];
  });
  return errs.length ? `failed to retag images: ${errs.join('; ')}` : '';
}

/**
 * An import that k3s reports as failed after it had already pinned `images` (retagImages runs
 * after labelImages): k3s logs it, does not record the file in .cache.json, and the pins stay.
 */
export class K3sImportError extends Error {
  override name = 'K3sImportError';
  constructor(
    message: string,
    readonly images: string[],
  ) {
    super(message);
  }
}

const IMPORT_PREFIX = /^import-\d{4}-\d{2}-\d{2}:/;
const CRI_MANAGED = 'io.cri-containerd.image';

/**
 * Gives the entries ctr named `import-<date>:<ref>` the name k3s gives them (`<ref>`), as
 * client.Import stores a name (existing labels kept), then drops ctr's name unless it was there
 * before. ctr's name is dropped only once CRI has taken it (its managed label): CRI's event
 * handler re-creates a name it is still working on, which would leave a name k3s never makes.
 */
async function renameAsK3s(node: LabNodeView, plan: ImportPlan, before: Set<string>): Promise<void> {
  const renames = plan.entries.filter((e) => e.ctrRenames !== undefined);
  if (renames.length === 0) return;
  const now = await listImages(node);
  for (const e of renames) {
    const ctrName = now.find((i) => IMPORT_PREFIX.test(i.name) && i.name.replace(IMPORT_PREFIX, '') === e.ctrRenames && i.digest === e.digest);
    if (!ctrName) throw new Error(`ctr did not create import-<date>:${e.ctrRenames} for ${e.digest}`);
    const rec = await getImageRecord(node, ctrName.name);
    if (!rec) throw new Error(`${ctrName.name} vanished during the import`);
    await storeImageName(node, e.k3sName!, rec.target);
    if (before.has(ctrName.name)) continue;
    for (let waited = 0; waited < 5000; waited += 50) {
      if ((await getImageRecord(node, ctrName.name))?.labels[CRI_MANAGED] !== undefined) break;
      await sleep(50);
    }
    await deleteImageRecord(node, ctrName.name);
  }
}

/**
 * Steps 2–3 for one archive, as k3s's preloadFile: import every platform without unpacking,
 * skipping manifests the archive lacks, naming images as client.Import does (readImportPlan),
 * then pin what it brought. Throws K3sImportError (pins kept) when retagging fails.
 */
export async function importArchive(node: LabNodeView, file: string, opts: K3sOptions = {}): Promise<string[]> {
  // older releases (top-level walk) match the suffix case-insensitively: APP.TAR.GZ is gzip
  const how = archiveDecompressor(opts.walk === 'top-level-case-insensitive' ? file.toLowerCase() : file);
  if (!how) throw new Error(`not a supported archive: ${file}`);
  let tarFile = file;
  let tmp: string | undefined;
  try {
    if (how !== 'none') {
      await mkdir(join(node.root, 'tmp'), { recursive: true });
      tmp = join(node.root, 'tmp', `import-${randomBytes(6).toString('hex')}.tar`);
      await decompressTo(file, how, tmp);
      tarFile = tmp;
    }
    const plan = await readImportPlan(tarFile);
    const before = new Set((await listImages(node)).map((i) => i.name));
    // k3s imports through the containerd client's local path; ctr 2.x defaults to the transfer
    // service (which replaces an existing image's whole label map) unless told --local.
    const local = node.containerdLine === '2' ? ['--local'] : [];
    const platforms = 'all' in plan.platforms ? ['--all-platforms'] : ['--platform', plan.platforms.only];
    await node.ctr(['images', 'import', ...local, ...platforms, '--no-unpack', tarFile]);
    await renameAsK3s(node, plan, before);
    const have = new Set((await listImages(node)).map((i) => i.name));
    const missing = plan.names.filter((n) => !have.has(n));
    if (missing.length) throw new Error(`import of ${file} did not create ${missing.join(', ')}`);
    await pinImages(node, plan.names, opts);
    const retag = retagErrors(plan.names);
    if (retag) throw new K3sImportError(retag, plan.names);
    return plan.names;
  } finally {
    if (tmp) await rm(tmp, { force: true });
  }
}

/** Supported by the walk: archives, and `.txt` lists unless `archivesOnly`. */
function supported(name: string, walk: StartupWalk, archivesOnly: boolean): boolean {
  const n = walk === 'top-level-case-insensitive' ? name.toLowerCase() : name;
  return isSupportedArchive(n) || (!archivesOnly && n.endsWith(PREPULL_SUFFIX));
}

/** The files k3s's start-up walk takes, sorted (dotfiles included: k3s does not skip them). */
async function walkImagesDir(dir: string, walk: StartupWalk = 'recursive-case-sensitive', archivesOnly = false): Promise<string[]> {
  const out: string[] = [];
  const walkDir = async (d: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        if (walk === 'recursive-case-sensitive') await walkDir(p);
      } else if (e.isFile() && supported(e.name, walk, archivesOnly)) out.push(p);
    }
  };
  await walkDir(dir);
  return out.sort();
}

const walkArchives = (dir: string): Promise<string[]> => walkImagesDir(dir, 'recursive-case-sensitive', true);

/**
 * `.cache.json` exactly as k3s writes it (pkg/agent/containerd/watcher.go, json.Marshal of
 * map[string]*fileInfo): the file's absolute in-node path → its size, its mtime as a metav1.Time
 * (RFC 3339, whole seconds, UTC), and — releases with k3s PR #14266 only — the image names the
 * file brought.
 */
export interface ImportCacheEntry {
  size: number;
  modTime: string;
  images?: string[];
}
export type ImportCache = Record<string, ImportCacheEntry>;

async function readCache(file: string): Promise<ImportCache | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return undefined; // absent: the cache is off
  }
  if (text.length === 0) return {}; // an empty file enables it; k3s does not parse it
  try {
    const parsed = JSON.parse(text) as unknown;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as ImportCache) : {};
  } catch {
    return {}; // k3s logs the error and starts with an empty cache (then overwrites the file)
  }
}

/** json.Marshal of a Go map: compact, keys sorted, no trailing newline. */
function serializeCache(cache: ImportCache): string {
  const sorted: ImportCache = {};
  for (const k of Object.keys(cache).sort()) sorted[k] = cache[k]!;
  return JSON.stringify(sorted);
}

/** metav1.Time's JSON: RFC 3339 in whole seconds, UTC. */
const rfc3339Seconds = (mtimeNs: bigint): string => new Date(Number(mtimeNs / 1_000_000_000n) * 1000).toISOString().replace('.000Z', 'Z');

interface Stamp {
  size: number;
  mtimeNs: bigint;
}

async function stampOf(file: string): Promise<Stamp | undefined> {
  try {
    const st = await stat(file, { bigint: true });
    return { size: Number(st.size), mtimeNs: st.mtimeNs };
  } catch {
    return undefined;
  }
}

function cacheEntry(st: Stamp, images: string[], opts: K3sOptions): ImportCacheEntry {
  return { size: st.size, modTime: rfc3339Seconds(st.mtimeNs), ...(opts.cacheFix ? { images } : {}) };
}

/**
 * k3s's comparison of a file with its record (full-precision mtime against the record, which is
 * whole seconds once read back from .cache.json): before the fix (k3s #14284 / PR #14288) only
 * `size != last.Size && ModTime().After(last.ModTime)`; with it, size changed OR mtime later.
 */
function changedSince(recorded: { size: number; mtimeNs: bigint }, cur: Stamp, fix: boolean): boolean {
  const later = cur.mtimeNs > recorded.mtimeNs;
  return fix ? cur.size !== recorded.size || later : cur.size !== recorded.size && later;
}

/** The running watcher's test for a file it imported before. */
const watcherTakes = (recorded: Stamp, cur: Stamp, opts: K3sOptions): boolean => changedSince(recorded, cur, opts.sameSizeFix ?? opts.cacheFix ?? false);

/**
 * The start-up test against a .cache.json entry (docs/k3s-facts.md, "The import cache
 * (.cache.json)", measured on k3s's own code): without the fix, re-import only when the size
 * differs AND the mtime is later (`images` ignored); with k3s PRs #14266 and #14288, re-import
 * when the entry has no `images`, the size differs, OR the mtime is later than the recorded
 * whole second — so a file with a sub-second mtime is re-imported at every start.
 */
function startReimports(e: ImportCacheEntry, cur: Stamp, opts: K3sOptions): boolean {
  if (opts.cacheFix && !Array.isArray(e.images)) return true;
  return changedSince(recordedStamp(e), cur, opts.cacheFix ?? false);
}

/** An entry kept for a skipped file, as k3s writes it back: modTime in whole seconds, `images` only with the fix. */
function keptEntry(e: ImportCacheEntry, opts: K3sOptions): ImportCacheEntry {
  const modTime = Number.isFinite(Date.parse(e.modTime)) ? rfc3339Seconds(recordedStamp(e).mtimeNs) : e.modTime;
  return { size: e.size, modTime, ...(opts.cacheFix && Array.isArray(e.images) ? { images: e.images } : {}) };
}

function recordedStamp(e: ImportCacheEntry): { size: number; mtimeNs: bigint } {
  const ms = typeof e.modTime === 'string' ? Date.parse(e.modTime) : NaN;
  // An unreadable record decodes as Go's zero time: any mtime is newer.
  return { size: typeof e.size === 'number' ? e.size : 0, mtimeNs: Number.isFinite(ms) ? BigInt(ms) * 1_000_000n : -(2n ** 62n) };
}

function nodePathOf(hostFile: string, hostDir: string, distro: Distro): string {
  return `${nodeImagesDir(distro)}/${relative(hostDir, hostFile).split('\\').join('/')}`;
}

async function updateCacheEntry(hostDir: string, distro: Distro, hostFile: string, images: string[], opts: K3sOptions): Promise<void> {
  const cacheFile = join(hostDir, CACHE_FILE);
  const cache = await readCache(cacheFile);
  if (!cache) return;
  const st = await stampOf(hostFile);
  if (!st) return;
  cache[nodePathOf(hostFile, hostDir, distro)] = cacheEntry(st, images, opts);
  await writeFile(cacheFile, serializeCache(cache));
}

/** Re-pins exactly `names` (both labels, nothing else — no digest or extra refs): k3s PR #14266. */
async function repinNames(node: LabNodeView, names: string[], opts: K3sOptions): Promise<string[]> {
  const existing = new Set((await listImages(node)).map((i) => i.name));
  const labels = { [distroPinLabel(opts.distro ?? node.distro)]: PINNED, [CRI_PIN_LABEL]: PINNED };
  const done: string[] = [];
  for (const name of names) {
    if (!existing.has(name)) continue; // a name deleted since the import is not recreated
    await setLabels(node, name, labels);
    done.push(name);
  }
  return done;
}

/** Lines k3s takes as references (go-containerregistry weak validation, restated coarsely). */
const LIST_REFERENCE = /^(?:[A-Za-z0-9.-]+(?::[0-9]+)?\/)?[a-z0-9]+(?:[._-]+[a-z0-9]+)*(?:\/[a-z0-9]+(?:[._-]+[a-z0-9]+)*)*(?::[\w][\w.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$/;

/**
 * A .txt list as k3s's prePullImages reads it: each trimmed line that is a reference is looked
 * up through CRI (ImageStatus); a present image contributes all its tags (RepoTags), which are
 * then pinned like an import. A name CRI does not have would be pulled — impossible in the lab's
 * air gap — and that error makes k3s pin nothing from the file.
 */
async function prepullList(node: LabNodeView, file: string, opts: K3sOptions): Promise<string[]> {
  const text = await readFile(file, 'utf8');
  const tags: string[] = [];
  for (const raw of text.split('\n')) {
    if (Buffer.byteLength(raw) >= 64 * 1024) throw new Error(`${file}: bufio.Scanner: token too long`);
    const name = raw.trim();
    if (name === '' || !LIST_REFERENCE.test(name)) continue;
    const img = await criImageStatus(node, name);
    if (!img || img.repoTags.length === 0) throw new Error(`failed to pull images from ${file}: ${name}: no registry reachable`);
    for (const t of img.repoTags) if (!tags.includes(t)) tags.push(t);
  }
  await pinImages(node, tags, opts);
  return tags;
}

/** RKE2's own `<component>-image.txt` lists, written when its images dir's top level holds only lists and JSON. */
async function writeRke2Lists(hostDir: string, images: Record<string, string>): Promise<void> {
  const top = await readdir(hostDir, { withFileTypes: true }).catch(() => []);
  if (top.some((e) => e.isFile() && !e.name.endsWith('.txt') && !e.name.endsWith('.json'))) return;
  await mkdir(hostDir, { recursive: true });
  for (const [component, ref] of Object.entries(images)) await writeFile(join(hostDir, `${component}-image.txt`), `${ref}\n`);
}

/** Imports an archive or reads a list: what one file brings, pinned. */
async function preloadFile(node: LabNodeView, file: string, opts: K3sOptions): Promise<string[]> {
  const lower = file.toLowerCase();
  if ((opts.walk === 'top-level-case-insensitive' ? lower : file).endsWith(PREPULL_SUFFIX)) return prepullList(node, file, opts);
  return importArchive(node, file, opts);
}

/**
 * What k3s/RKE2 do to images at start (docs/k3s-facts.md, "What k3s does to images at every
 * start"): clearLabels, then every file the release's walk takes — skipped when .cache.json
 * records it unchanged as k3s compares (then, with cacheFix, its recorded names re-pinned) — then
 * the cache synced: entries for files not seen (vanished, or failed) pruned, written only if the
 * file exists.
 */
export function emulateK3sStart(node: LabNodeView, opts: K3sOptions = {}): Promise<K3sStartReport> {
  return withNodeLock(node, async () => {
    const distro = opts.distro ?? node.distro;
    const walk = opts.walk ?? 'recursive-case-sensitive';
    const hostDir = hostImagesDirOf(node, distro);
    const cacheFile = join(hostDir, CACHE_FILE);
    const report: K3sStartReport = { imported: [], skippedByCache: [], cleared: [], repinned: [], failed: [] };

    report.cleared = await clearLabels(node, distro);
    if (distro === 'rke2' && opts.rke2Images) await writeRke2Lists(hostDir, opts.rke2Images);

    // Releases before the rewrite that brought the cache have no cache at all.
    const cache = walk === 'recursive-case-sensitive' ? await readCache(cacheFile) : undefined;
    const nextCache: ImportCache = {};
    const toRepin: string[] = [];
    for (const file of await walkImagesDir(hostDir, walk)) {
      const nodePath = nodePathOf(file, hostDir, distro);
      const st = await stampOf(file);
      if (!st) continue; // vanished meanwhile
      const recorded = cache?.[nodePath];
      if (recorded && !startReimports(recorded, st, opts)) {
        report.skippedByCache.push(file);
        nextCache[nodePath] = keptEntry(recorded, opts); // seen: kept as recorded
        // With the fix the recorded names are trusted: re-pinned whatever the file holds now.
        if (opts.cacheFix) toRepin.push(...(recorded.images ?? []));
        continue;
      }
      try {
        const images = await preloadFile(node, file, opts);
        report.imported.push({ archive: file, nodePath, images });
        nextCache[nodePath] = cacheEntry(st, images, opts);
      } catch (e) {
        report.failed.push(failedImport(file, e));
      }
    }
    // "This is done once on startup, same as pinned label clearing" (k3s PR #14266).
    if (toRepin.length) report.repinned = await repinNames(node, [...new Set(toRepin)], opts);
    if (cache) await writeFile(cacheFile, serializeCache(nextCache));
    return report;
  });
}

// ---------------------------------------------------------------------------------------------
// The running agent's watcher

export interface K3sWatcher {
  stop(): Promise<void>;
  /** Archives imported so far (host paths, in order), and failures. */
  readonly imported: ImportedArchive[];
  readonly failed: FailedImport[];
}

export interface WatcherOptions extends K3sOptions {
  /** Poll interval, default 250 ms. */
  pollMs?: number;
  /** How long a new/grown file must stay unchanged before import, default 2000 ms. */
  settleMs?: number;
  /** Called as each import is done or fails (k3s's log lines: `npm run lab` prints them). */
  onImported?: (a: ImportedArchive) => void;
  onFailed?: (f: FailedImport) => void;
}

/**
 * Imports (steps 2–3 for that one file) new supported archives about 2 s after they appear or
 * stop growing; a changed one only as k3s's watcher takes a change (size changed AND mtime newer
 * than at its last import, before k3s #14284). Files present when the watcher starts count as
 * imported then. Never touches other extensions; deleting a file un-pins nothing, and a file put
 * back under a freed name is new. Updates .cache.json (the real format) if enabled.
 */
export function startK3sWatcher(node: LabNodeView, opts: WatcherOptions = {}): K3sWatcher {
  const distro = opts.distro ?? node.distro;
  const hostDir = hostImagesDirOf(node, distro);
  const pollMs = opts.pollMs ?? 250;
  const settleMs = opts.settleMs ?? 2000;
  type State = { size: number; mtime: number; changedAt: number; handled: boolean };
  const seen = new Map<string, State>();
  // What k3s's watcher compares a changed file with: the stamp of its last import.
  const lastImport = new Map<string, Stamp>();
  const imported: ImportedArchive[] = [];
  const failed: FailedImport[] = [];
  let stopped = false;

  const scan = async (initial: boolean): Promise<void> => {
    const now = Date.now();
    const present = new Set<string>();
    for (const file of await walkArchives(hostDir)) {
      let st;
      try {
        st = await stat(file);
      } catch {
        continue;
      }
      present.add(file);
      const s = seen.get(file);
      if (!s || s.size !== st.size || s.mtime !== st.mtimeMs) {
        seen.set(file, { size: st.size, mtime: st.mtimeMs, changedAt: now, handled: initial });
        if (initial) {
          // imported at start: k3s holds its record
          const cur = await stampOf(file);
          if (cur) lastImport.set(file, cur);
        }
        continue;
      }
      if (!s.handled && now - s.changedAt >= settleMs && !stopped) {
        s.handled = true;
        const cur = await stampOf(file);
        const last = lastImport.get(file);
        if (!cur || (last && !watcherTakes(last, cur, opts))) continue; // k3s skips this change
        try {
          const images = await withNodeLock(node, () => importArchive(node, file, opts));
          lastImport.set(file, cur);
          const done = { archive: file, nodePath: nodePathOf(file, hostDir, distro), images };
          imported.push(done);
          await updateCacheEntry(hostDir, distro, file, images, opts).catch(() => undefined);
          opts.onImported?.(done);
        } catch (e) {
          const f = failedImport(file, e);
          failed.push(f);
          opts.onFailed?.(f);
        }
      }
    }
    for (const f of [...seen.keys()]) {
      if (present.has(f)) continue;
      seen.delete(f); // deleted: un-pins nothing, and a file put back under its name is new
      lastImport.delete(f);
    }
  };

  let loop: Promise<void> = (async () => {
    await scan(true).catch(() => undefined);
    while (!stopped) {
      await sleep(pollMs);
      if (stopped) break;
      await scan(false).catch(() => undefined);
    }
  })();

  return {
    imported,
    failed,
    async stop(): Promise<void> {
      stopped = true;
      await loop;
      loop = Promise.resolve();
    },
  };
}
