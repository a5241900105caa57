// Fake k3s nodes for UI tests, at the level of one NodeSession: containerd (image records,
// labels, content store blobs, containers, events), the images dir (real archive bytes, k3s's
// .cache.json, pre-pull lists; uploads over the SFTP calls core/upload makes — staged under the
// hidden partial name, hashed, renamed into place — over a link of a given bandwidth), k3s's
// watcher (an archive that lands is imported as lab/k3s.ts imports it on the real lab, with its
// rules) and the node's disk. The real service (src/core/service/, the
// same handlers Electron main and `holdfast serve` run) runs over them, so the UI specs exercise
// the real selection logic, pin rules, fate prediction, removal checks and error envelopes.
// Nothing here decides what the UI shows: it only holds node state, as a node would.
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { Readable } from 'node:stream';
import { gunzipSync, gzipSync } from 'node:zlib';
import { decompress as unzstd } from 'fzstd';
import type { ContainerRecord, ContainerdClient, ContentInfo, EventEnvelope, EventSubscription, ContainerdImage, PluginInfo } from '../../src/core/containerd/client';
import type { FileAccess, ListedFile, RemoteStat, UploadArea } from '../../src/core/access';
import { HoldfastError } from '../../src/core/errors';
import { NEEDS_SCRIPT_NAME } from '../../src/core/needs/cluster';
import { listImageRefs } from '../../src/core/images/list';
import { TargetResolver } from '../../src/core/images/resolve';
import type { NodeSession, OpenNodeOptions, SessionSftp, SessionSsh } from '../../src/core/node/session';
import type { ImageRef } from '../../src/shared/domain/images';
import type { NodeDef, NodeInfo } from '../../src/shared/domain/nodes';
import { addsDigestRefs, watcherImports } from '../../src/shared/versions';
import { classifyImagesDirPath } from '../../src/shared/archiveSuffixes';
import type { UploadTarget } from '../../src/core/access/paths';
import { CRI_PIN_LABEL, distroPinLabel, normalizeDockerRef, parseNamedTagged, PINNED } from '../../lab/k3s';
import { k3sEntryName } from '../../lab/importPlan';
import { kubectlJson } from '../../lab/workloads';
import type { FakeClusterAnswer } from './cluster';

const INDEX = 'application/vnd.oci.image.index.v1+json';
const MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const PLATFORM = { os: 'linux', architecture: 'amd64' };
/** The label containerd's CRI plugin puts on every image of its namespace. */
const CRI_MANAGED = 'io.cri-containerd.image';
const hash = (b: Buffer | string) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/** One image reference as the fake data describes it (derived fields such as pin are ignored). */
/**
 * An image record as the fake data gives it: ImageRef's own fields (digest and image id are only
 * keys here: the node stores the real digests of the target and config it builds).
 */
export type FakeImageSpec = Pick<ImageRef, 'name' | 'digest' | 'mediaType' | 'imageId' | 'size' | 'platforms' | 'createdAt' | 'labels'> & {
  /** When containerd last changed its record (default: createdAt). */
  updatedAt?: string;
};

/** A file in the images dir: an archive (its images by name), or plain text / raw bytes. */
export type FakeFileSpec =
  | { path: string; mtime: string; archive: { compression: 'zstd' | 'gzip' | 'none'; images: string[] } }
  | { path: string; mtime: string; text: string }
  | { path: string; mtime: string; bytes: Buffer };

export interface FakeNodeSpec {
  def: NodeDef;
  info: NodeInfo;
  images: FakeImageSpec[];
  files: FakeFileSpec[];
  /** Files k3s recorded in .cache.json as imported unchanged (relative paths). */
  importCache?: string[];
  containers?: ContainerRecord[];
  /** Shared layers: blobs of `size` shared by every image whose name starts with `prefix`. */
  sharedLayers?: { prefix: string; size: number }[];
  /** File system of everything (images dir, content, snapshots). */
  disk: { totalBytes: number; freeBytes: number };
  /** Refuse to open: the error the SSH layer would throw (host key, timeout, auth …). */
  refuse?: (opts: OpenNodeOptions) => Promise<HoldfastError | null>;
  /** Milliseconds each containerd call takes (default 20): a slow link. */
  latencyMs?: number;
  /** Every label update fails with this (containerd stopped answering writes). */
  failLabelUpdates?: HoldfastError;
  /** Upload bandwidth of the link in bytes per second (default: no limit). */
  linkBytesPerSec?: number;
  /** How long k3s's watcher waits after an archive lands before importing it (default 1000 ms). */
  k3sSettleMs?: number;
  /**
   * What the node answers to Holdfast's needs script (core/needs/cluster.ts): a server's
   * `k3s kubectl get … -o json` and the sandbox image of its containerd config, or kubectl's
   * failure. Default: no k3s kubectl on the node (exit 127).
   */
  cluster?: FakeClusterAnswer;
  /** Files elsewhere on the node, by absolute path (e.g. the guard's state record in /var/lib/holdfast). */
  nodeFiles?: Record<string, string>;
}

/** The config blob of an image: its real digest is the node's image id. */
export function configBody(spec: Pick<FakeImageSpec, 'imageId' | 'digest' | 'createdAt'>, platform = PLATFORM): Buffer {
  return Buffer.from(
    JSON.stringify({ ...platform, created: spec.createdAt ?? undefined, config: { Labels: { 'fake.holdfast.id': spec.imageId ?? spec.digest } }, rootfs: { type: 'layers', diff_ids: [] } }),
  );
}

/** The image id the fake node gives an image of the fake data (config digest, node platform). */
export function nodeImageId(spec: Pick<FakeImageSpec, 'imageId' | 'digest' | 'createdAt'>): string {
  return hash(configBody(spec));
}

function parsePlatform(p: string) {
  const [os, architecture, variant] = p.split('/');
  return { os: os!, architecture: architecture!, ...(variant ? { variant } : {}) };
}

class Emitter implements EventSubscription {
  private readonly ee = new EventEmitter();
  constructor(private readonly onCancel: () => void) {}
  on(event: 'event' | 'error' | 'end', cb: (...a: never[]) => void): EventSubscription {
    this.ee.on(event, cb as (...a: unknown[]) => void);
    return this;
  }
  emit(e: EventEnvelope): void {
    this.ee.emit('event', e);
  }
  end(): void {
    this.ee.emit('end');
  }
  fail(e: HoldfastError): void {
    this.ee.emit('error', e);
  }
  cancel(): void {
    this.onCancel();
  }
}

/** containerd of one fake node: what Holdfast's ContainerdClient is asked, answered from memory. */
export class FakeContainerd implements ContainerdClient {
  readonly records = new Map<string, ContainerdImage>();
  readonly blobs = new Map<string, Buffer | number>();
  readonly subscriptions = new Set<Emitter>();
  containers: ContainerRecord[] = [];
  /** Set to make every call fail as containerd does when it stopped answering. */
  down: HoldfastError | null = null;
  /** Set to make label updates fail (reads still answered). */
  failUpdates: HoldfastError | null = null;

  constructor(
    readonly node: string,
    private readonly version_: { version: string; revision: string },
    readonly namespace: string,
    private readonly latencyMs: number,
  ) {}

  private async tick(): Promise<void> {
    if (this.latencyMs) await new Promise((r) => setTimeout(r, this.latencyMs));
    if (this.down) throw this.down;
  }

  /** Adds an image: index (one manifest per platform) or a manifest, config and layers. */
  addImage(spec: FakeImageSpec, shared: { prefix: string; size: number }[] = []): ContainerdImage {
    const platforms = spec.platforms.length ? spec.platforms : ['linux/amd64'];
    const config = configBody(spec);
    const configDigest = hash(config);
    this.blobs.set(configDigest, config);
    const sharedLayer = shared.find((s) => spec.name.startsWith(s.prefix));
    const manifestFor = (p: string, own: number) => {
      const layers = [
        ...(sharedLayer ? [{ mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', digest: hash(`shared:${sharedLayer.prefix}`), size: sharedLayer.size }] : []),
        { mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', digest: hash(`layer:${spec.imageId ?? spec.digest}:${p}`), size: Math.max(0, own - (sharedLayer?.size ?? 0)) },
      ];
      // Only the node's platform has its blobs in the content store: an archive of several
      // platforms brings them all, but a pull or `ctr export` only the node's (k3s skips missing).
      const own_ = p === 'linux/amd64';
      if (own_) for (const l of layers) this.blobs.set(l.digest, l.size);
      const other = configBody(spec, parsePlatform(p));
      const cfg = own_ ? { digest: configDigest, size: config.length } : { digest: hash(other), size: other.length };
      return Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: MANIFEST, config: { mediaType: 'application/vnd.oci.image.config.v1+json', ...cfg }, layers }));
    };
    let target: Buffer;
    let mediaType: string;
    if (spec.mediaType === INDEX) {
      // CRI sizes an image as target + the node platform's config and layers: spec.size in all.
      const manifests = platforms.map((p) => {
        const m = manifestFor(p, 0);
        return { p, m };
      });
      const draft = JSON.stringify({ schemaVersion: 2, mediaType: INDEX, manifests: manifests.map(({ p, m }) => ({ mediaType: MANIFEST, digest: hash(m), size: m.length, platform: parsePlatform(p) })) });
      const own = Math.max(0, spec.size - draft.length - config.length);
      const entries = platforms.map((p) => {
        const m = manifestFor(p, own);
        this.blobs.set(hash(m), m);
        return { mediaType: MANIFEST, digest: hash(m), size: m.length, platform: parsePlatform(p) };
      });
      target = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: INDEX, manifests: entries }));
      mediaType = INDEX;
    } else {
      const draft = manifestFor(platforms[0]!, 0);
      target = manifestFor(platforms[0]!, Math.max(0, spec.size - draft.length - config.length));
      mediaType = MANIFEST;
    }
    const digest = hash(target);
    this.blobs.set(digest, target);
    const record: ContainerdImage = {
      name: spec.name,
      labels: { ...spec.labels },
      target: { mediaType, digest, size: target.length, annotations: {} },
      createdAt: spec.createdAt ? new Date(spec.createdAt) : null,
      updatedAt: spec.updatedAt ? new Date(spec.updatedAt) : spec.createdAt ? new Date(spec.createdAt) : null,
    };
    this.records.set(spec.name, record);
    return record;
  }

  /** A digest reference's name for the image of `name` (the real target digest). */
  digestRefOf(name: string): string {
    const r = this.records.get(name);
    if (!r) throw new Error(`no image ${name}`);
    return `${name.replace(/[:@].*$/, '').replace(/:[^/]*$/, '')}@${r.target.digest}`;
  }

  publish(topic: '/images/create' | '/images/update' | '/images/delete', name: string): void {
    const r = this.records.get(name);
    const e: EventEnvelope = {
      timestamp: new Date(),
      namespace: this.namespace,
      topic,
      typeUrl: `containerd.services.images.v1.Image${topic === '/images/create' ? 'Create' : topic === '/images/update' ? 'Update' : 'Delete'}`,
      image: { name, labels: r ? { ...r.labels } : {} },
    };
    for (const s of this.subscriptions) s.emit(e);
  }

  // ---- the ContainerdClient surface Holdfast uses ----

  async version() {
    await this.tick();
    return { ...this.version_ };
  }
  async listNamespaces() {
    await this.tick();
    return [this.namespace];
  }
  /** While set, the image list is answered only once it resolves (a slow node). */
  hold: Promise<void> | null = null;

  async listImages(): Promise<ContainerdImage[]> {
    await this.tick();
    if (this.hold) await this.hold;
    return [...this.records.values()].map((r) => structuredClone(r));
  }
  async getImage(name: string): Promise<ContainerdImage | null> {
    await this.tick();
    const r = this.records.get(name);
    return r ? structuredClone(r) : null;
  }
  async createImage(image: { name: string; labels?: Record<string, string>; target: ContainerdImage['target'] }): Promise<ContainerdImage> {
    await this.tick();
    const now = new Date();
    const r: ContainerdImage = { name: image.name, labels: { ...(image.labels ?? {}) }, target: image.target, createdAt: now, updatedAt: now };
    this.records.set(image.name, r);
    this.publish('/images/create', image.name);
    const answer = structuredClone(r);
    this.criSaw(image.name);
    return answer;
  }

  /**
   * What containerd's CRI plugin does with an image any client creates in its namespace (k8s.io):
   * it marks the record managed and records the image under its id too (`sha256:<config digest>`
   * of the node's platform, labelled managed), as test/integration/doubles-contract.test.ts
   * shows on containerd itself. Nothing when the config is not in the content store.
   */
  private criSaw(name: string): void {
    if (this.namespace !== 'k8s.io') return;
    const r = this.records.get(name);
    if (!r) return;
    if (r.labels[CRI_MANAGED] !== 'managed') {
      r.labels[CRI_MANAGED] = 'managed';
      this.publish('/images/update', name);
    }
    const id = this.imageIdOf(r.target.digest);
    if (!id || this.records.has(id)) return;
    this.records.set(id, { name: id, labels: { [CRI_MANAGED]: 'managed' }, target: { ...r.target }, createdAt: r.createdAt, updatedAt: r.updatedAt });
    this.publish('/images/create', id);
  }

  /** The config digest of the node platform's manifest under `digest` (an index or a manifest); null if a blob is missing. */
  private imageIdOf(digest: string): string | null {
    const body = this.blobs.get(digest);
    if (!Buffer.isBuffer(body)) return null;
    const json = JSON.parse(body.toString('utf8')) as { manifests?: { digest: string; platform?: { os: string; architecture: string } }[]; config?: { digest: string } };
    if (json.manifests) {
      const own = json.manifests.find((m) => m.platform?.os === PLATFORM.os && m.platform.architecture === PLATFORM.architecture);
      return own ? this.imageIdOf(own.digest) : null;
    }
    const config = json.config?.digest;
    return config && this.blobs.has(config) ? config : null;
  }
  async updateImageLabels(name: string, changes: Record<string, string | null>): Promise<ContainerdImage> {
    await this.tick();
    if (this.failUpdates) throw this.failUpdates;
    const r = this.records.get(name);
    if (!r) throw new HoldfastError('NOT_FOUND', `image ${name} not found on ${this.node}`);
    for (const [k, v] of Object.entries(changes)) {
      if (v === null) delete r.labels[k];
      else r.labels[k] = v;
    }
    r.updatedAt = new Date();
    this.publish('/images/update', name);
    return structuredClone(r);
  }
  async deleteImage(name: string): Promise<void> {
    await this.tick();
    if (!this.records.delete(name)) throw new HoldfastError('NOT_FOUND', `image ${name} not found on ${this.node}`);
    this.collectGarbage();
    this.publish('/images/delete', name);
  }

  /** Called with the bytes containerd's GC gave back (the node's disk grows by them). */
  onFreed: (bytes: number) => void = () => undefined;

  /** containerd's GC: blobs no image reaches any more are deleted. */
  private collectGarbage(): void {
    const reached = new Set<string>();
    const walk = (digest: string) => {
      if (reached.has(digest)) return;
      reached.add(digest);
      const b = this.blobs.get(digest);
      if (!Buffer.isBuffer(b)) return;
      let body: { manifests?: { digest: string }[]; config?: { digest: string }; layers?: { digest: string }[] };
      try {
        body = JSON.parse(b.toString('utf8')) as typeof body;
      } catch {
        return;
      }
      for (const d of [...(body.manifests ?? []), ...(body.config ? [body.config] : []), ...(body.layers ?? [])]) walk(d.digest);
    };
    for (const r of this.records.values()) walk(r.target.digest);
    let freed = 0;
    for (const [d, b] of this.blobs) {
      if (reached.has(d)) continue;
      freed += typeof b === 'number' ? b : b.length;
      this.blobs.delete(d);
    }
    if (freed) this.onFreed(freed);
  }
  async contentInfo(digest: string): Promise<ContentInfo | null> {
    await this.tick();
    const b = this.blobs.get(digest);
    if (b === undefined) return null;
    return { digest, size: typeof b === 'number' ? b : b.length, labels: {} };
  }
  async readContent(digest: string): Promise<Buffer> {
    await this.tick();
    const b = this.blobs.get(digest);
    if (b === undefined || typeof b === 'number') throw new HoldfastError('NOT_FOUND', `content ${digest} not found`);
    return Buffer.from(b);
  }
  subscribe(_filters: string[]): EventSubscription {
    const s: Emitter = new Emitter(() => this.subscriptions.delete(s));
    this.subscriptions.add(s);
    return s;
  }
  async listContainers(): Promise<ContainerRecord[]> {
    await this.tick();
    return structuredClone(this.containers);
  }
  async plugins(): Promise<PluginInfo[]> {
    await this.tick();
    const root = '/var/lib/rancher/k3s/agent/containerd';
    return [
      { type: 'io.containerd.content.v1', id: 'content', exports: { root: `${root}/io.containerd.content.v1.content` }, initError: null },
      { type: 'io.containerd.snapshotter.v1', id: 'overlayfs', exports: { root: `${root}/io.containerd.snapshotter.v1.overlayfs` }, initError: null },
    ];
  }
  async createLease(): Promise<void> {}
  async deleteLease(): Promise<void> {}
  close(): void {
    for (const s of [...this.subscriptions]) s.end();
    this.subscriptions.clear();
  }
}

// ---- archives: real bytes, so the real index reader reads them ----

/** One ustar member (regular file). */
export function tarEntry(name: string, body: Buffer): Buffer {
  const h = Buffer.alloc(512);
  h.write(name, 0, 100, 'utf8');
  h.write('0000644\0', 100);
  h.write('0000000\0', 108);
  h.write('0000000\0', 116);
  h.write(body.length.toString(8).padStart(11, '0') + '\0', 124);
  h.write('00000000000\0', 136);
  h.write('        ', 148);
  h.write('0', 156);
  h.write('ustar\0', 257);
  h.write('00', 263);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148);
  const pad = Buffer.alloc((512 - (body.length % 512)) % 512);
  return Buffer.concat([h, body, pad]);
}

/** A zstd frame of raw (stored) blocks: what fzstd reads, without a compressor. */
export function zstdStored(data: Buffer): Buffer {
  const parts: Buffer[] = [Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38])]; // magic; no FCS; window 128 KiB
  const max = 128 * 1024;
  for (let off = 0; off < data.length || off === 0; off += max) {
    const chunk = data.subarray(off, off + max);
    const last = off + max >= data.length ? 1 : 0;
    const header = (chunk.length << 3) | last; // type 0: raw
    parts.push(Buffer.from([header & 0xff, (header >> 8) & 0xff, (header >> 16) & 0xff]), chunk);
    if (data.length === 0) break;
  }
  return Buffer.concat(parts);
}

/** A docker-save archive of the given images (config only: the fake node has the layers). */
export function archiveBytes(images: FakeImageSpec[], compression: 'zstd' | 'gzip' | 'none'): Buffer {
  const entries: Buffer[] = [];
  const manifest = images.map((im, i) => {
    entries.push(tarEntry(`config-${i}.json`, configBody(im)));
    return { Config: `config-${i}.json`, RepoTags: [im.name], Layers: [] };
  });
  const tar = Buffer.concat([tarEntry('manifest.json', Buffer.from(JSON.stringify(manifest))), ...entries, Buffer.alloc(1024)]);
  return compression === 'gzip' ? gzipSync(tar) : compression === 'zstd' ? zstdStored(tar) : tar;
}

/** The images dir of one fake node, as FileAccess (SFTP mode: the SSH user is root). */
export class FakeFiles implements FileAccess {
  readonly mode = 'sftp' as const;
  readonly files = new Map<string, { data: Buffer; mtime: number }>();
  /** Files outside the images dir, by absolute path: read-only here (stat and read). */
  readonly elsewhere = new Map<string, { data: Buffer; mtime: number }>();

  constructor(private readonly root: () => string) {}

  /** Called when a file gets its final name in the images dir (an upload's rename). */
  onArrived: (rel: string) => void = () => undefined;

  rel(p: string): string | null {
    const base = this.root().replace(/\/+$/, '');
    return p.startsWith(base + '/') ? p.slice(base.length + 1) : null;
  }
  put(rel: string, data: Buffer, mtime: number): void {
    this.files.set(rel, { data, mtime });
  }
  /** An SFTP write at `pos` (the file grows as needed). */
  writeAt(rel: string, pos: number, data: Buffer): void {
    const f = this.files.get(rel);
    if (!f) throw new Error(`no such file: ${rel}`);
    if (pos + data.length > f.data.length) {
      const grown = Buffer.alloc(pos + data.length);
      f.data.copy(grown);
      f.data = grown;
    }
    data.copy(f.data, pos);
    f.mtime = Math.floor(Date.now() / 1000);
  }
  async stat(p: string): Promise<RemoteStat | null> {
    const rel = this.rel(p);
    const f = rel !== null ? this.files.get(rel) : this.elsewhere.get(p);
    if (f) return { type: 'file', size: f.data.length, mtime: f.mtime };
    const dirs = ['/', '/var', '/var/lib', '/var/lib/rancher', '/var/lib/rancher/k3s', '/var/lib/rancher/k3s/agent', '/var/lib/rancher/k3s/agent/containerd', this.root()];
    if (dirs.includes(p.replace(/\/+$/, '') || '/') || p.startsWith('/var/lib/rancher/k3s/agent/containerd/')) return { type: 'dir', size: 4096, mtime: 0 };
    return null;
  }
  async listFiles(root: string): Promise<ListedFile[]> {
    const base = root.replace(/\/+$/, '');
    // Every regular file, dotfiles too (.cache.json, an upload's hidden partial name), as SFTP
    // readdir and sudo find list them: telling them from archives is core's job.
    return [...this.files.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([rel, f]) => ({ path: rel, abs: `${base}/${rel}`, size: f.data.length, mtime: f.mtime }));
  }
  /** The fake keeps whole-second mtimes, as a file extracted from a tar has them. */
  async subSecondMtimes(root: string): Promise<ReadonlyMap<string, number> | null> {
    return new Map((await this.listFiles(root)).map((f) => [f.abs, 0]));
  }
  readStream(p: string): Readable {
    const rel = this.rel(p);
    const f = rel !== null ? this.files.get(rel) : this.elsewhere.get(p);
    if (!f) return new Readable({ read() { this.destroy(new HoldfastError('NOT_FOUND', `no such file: ${p}`)); } });
    return Readable.from([f.data]);
  }
  async versionKey(file: ListedFile): Promise<string> {
    const f = this.files.get(file.path);
    return f ? hash(f.data) : 'gone';
  }
  async sha256(p: string): Promise<string> {
    const rel = this.rel(p);
    const f = rel !== null ? this.files.get(rel) : undefined;
    if (!f) throw new HoldfastError('NOT_FOUND', `no such file: ${p}`);
    return hash(f.data).slice(7);
  }
  async remove(p: string): Promise<void> {
    const rel = this.rel(p);
    if (rel !== null) this.files.delete(rel);
  }
  async mkdirp(): Promise<void> {}
  async freeSpace(): Promise<{ free: number; total: number | null } | null> {
    return null;
  }
  async realpath(p: string): Promise<string | null> {
    return (await this.stat(p)) ? p.replace(/(.)\/+$/, '$1') : null;
  }
  /** As root over SFTP (access/sftp.ts): the staging file next to the final name, renamed onto it. */
  async uploadArea(target: UploadTarget): Promise<UploadArea> {
    const staging = target.stagingPath;
    const stagingRel = this.rel(staging);
    const finalRel = this.rel(target.remotePath);
    if (stagingRel === null || finalRel === null) throw new HoldfastError('REFUSED', `${target.remotePath} is outside the fake node's images dir`);
    return {
      writePath: staging,
      separateDir: null,
      prepare: async () => undefined,
      statWritten: () => this.stat(staging),
      sha256Written: () => this.sha256(staging),
      removeWritten: () => this.remove(staging),
      stage: async () => staging,
      commit: async () => {
        const f = this.files.get(stagingRel);
        if (!f) throw new HoldfastError('REFUSED', `Cannot rename ${staging} to ${target.remotePath} on the node: No such file.`);
        if (this.files.has(finalRel)) return false;
        this.files.delete(stagingRel);
        this.files.set(finalRel, f);
        this.onArrived(finalRel);
        return true;
      },
      discardStaged: () => this.remove(staging),
    };
  }
}

/** One fake node: its containerd, images dir and disk; sessions opened on it share that state. */
export class FakeNode {
  readonly containerd: FakeContainerd;
  readonly files: FakeFiles;
  def: NodeDef;
  info: NodeInfo;
  disk: { totalBytes: number; freeBytes: number };
  /** How many sessions were opened (connects, reconnects). */
  opened = 0;

  constructor(readonly spec: FakeNodeSpec) {
    this.def = spec.def;
    this.info = spec.info;
    this.disk = { ...spec.disk };
    this.containerd = new FakeContainerd(spec.def.name, { version: spec.info.containerdVersion, revision: spec.info.containerdRevision ?? '' }, spec.def.namespace, spec.latencyMs ?? 20);
    this.containerd.containers = structuredClone(spec.containers ?? []);
    this.containerd.failUpdates = spec.failLabelUpdates ?? null;
    this.containerd.onFreed = (bytes) => (this.disk.freeBytes = Math.min(this.disk.totalBytes, this.disk.freeBytes + bytes));
    for (const im of spec.images) this.containerd.addImage(im, spec.sharedLayers);
    this.files = new FakeFiles(() => this.def.imagesDir);
    for (const f of spec.files) {
      const mtime = Math.floor(Date.parse(f.mtime) / 1000);
      if ('archive' in f) {
        const ims = f.archive.images.map((n) => spec.images.find((i) => i.name === n) ?? { name: n, digest: n, mediaType: MANIFEST, imageId: n, size: 0, platforms: ['linux/amd64'], createdAt: null, labels: {} });
        this.files.put(f.path, archiveBytes(ims, f.archive.compression), mtime);
      } else if ('text' in f) this.files.put(f.path, Buffer.from(f.text), mtime);
      else this.files.put(f.path, f.bytes, mtime);
    }
    if (spec.importCache) {
      const cache: Record<string, unknown> = {};
      for (const rel of spec.importCache) {
        const f = this.files.files.get(rel)!;
        cache[`${this.def.imagesDir.replace(/\/+$/, '')}/${rel}`] = { size: f.data.length, modTime: new Date(f.mtime * 1000).toISOString().replace(/\.\d+Z$/, 'Z') };
      }
      this.files.put('.cache.json', Buffer.from(JSON.stringify(cache)), mtime0());
    }
    for (const [abs, text] of Object.entries(spec.nodeFiles ?? {})) this.files.elsewhere.set(abs, { data: Buffer.from(text), mtime: mtime0() });
    this.files.onArrived = (rel) => this.archiveArrived(rel);
  }

  // ---- the link's bandwidth, for uploads ----

  private linkFreeAt = 0;
  /** Resolves once `bytes` have crossed the link (writes queue behind each other, as on one link). */
  transfer(bytes: number): Promise<void> {
    const bps = this.spec.linkBytesPerSec;
    if (!bps) return new Promise((r) => setImmediate(r));
    const now = Date.now();
    this.linkFreeAt = Math.max(now, this.linkFreeAt) + (bytes / bps) * 1000;
    return new Promise((r) => setTimeout(r, this.linkFreeAt - now));
  }

  // ---- k3s: its watcher imports an archive that lands in the images dir ----

  /** Archives k3s imported (relative paths, in order), and the ones it failed on. */
  readonly k3sImported: string[] = [];
  readonly k3sFailed: { rel: string; error: string }[] = [];

  private archiveArrived(rel: string): void {
    const f = this.files.files.get(rel);
    if (!f || classifyImagesDirPath(rel).kind !== 'archive') return;
    // Releases without the watcher import only at start (shared/versions says which).
    if (watcherImports(null, { size: f.data.length, mtime: f.mtime }, this.info.distroVersion) === 'no') return;
    setTimeout(() => {
      this.k3sImport(rel).then(
        () => this.k3sImported.push(rel),
        (e: unknown) => this.k3sFailed.push({ rel, error: e instanceof Error ? e.message : String(e) }),
      );
    }, this.spec.k3sSettleMs ?? 1000);
  }

  /**
   * What k3s's preloadFile does with one archive (lab/k3s.ts importArchive, on this node's
   * containerd): every blob into the content store, each image named as containerd's importer
   * names it (lab/importPlan: docker-save RepoTags normalised, OCI entries by annotation), both
   * pin labels on every name (lab/k3s.ts pinImages), the digest references on releases that add
   * them (shared/versions addsDigestRefs), and the file recorded in .cache.json.
   */
  async k3sImport(rel: string): Promise<string[]> {
    const f = this.files.files.get(rel);
    if (!f) throw new Error(`${rel} is gone`);
    const kind = classifyImagesDirPath(rel);
    if (kind.kind !== 'archive') throw new Error(`not a supported archive: ${rel}`);
    const tar = kind.compression === 'gzip' ? gunzipSync(f.data) : kind.compression === 'zstd' ? Buffer.from(unzstd(f.data)) : kind.compression === 'none' ? f.data : null;
    if (!tar) throw new Error(`the fake k3s reads no ${kind.compression} archives`);
    const members = untar(tar);
    const cd = this.containerd;
    const images: { name: string; target: ContainerdImage['target'] }[] = [];
    if (members.has('index.json')) {
      for (const [p, b] of members) {
        const m = /^blobs\/sha256\/([0-9a-f]{64})$/.exec(p);
        if (m) cd.blobs.set(`sha256:${m[1]}`, b);
      }
      const index = JSON.parse(members.get('index.json')!.toString('utf8')) as { manifests?: { mediaType: string; digest: string; size: number; annotations?: Record<string, string> }[] };
      for (const d of index.manifests ?? []) {
        const name = k3sEntryName(d.annotations);
        if (name) images.push({ name, target: { mediaType: d.mediaType, digest: d.digest, size: d.size, annotations: {} } });
      }
    } else if (members.has('manifest.json')) {
      const list = JSON.parse(members.get('manifest.json')!.toString('utf8')) as { Config: string; RepoTags?: string[]; Layers: string[] }[];
      for (const e of list) {
        const config = members.get(e.Config);
        const layers = e.Layers.map((l) => members.get(l));
        if (!config || layers.some((l) => !l)) throw new Error(`${rel}: a blob of ${e.RepoTags?.join(', ')} is missing`);
        // containerd writes a manifest for a docker-save image (its digest is the image's target).
        cd.blobs.set(hash(config), config);
        for (const l of layers) cd.blobs.set(hash(l!), l!);
        const manifest = Buffer.from(
          JSON.stringify({
            schemaVersion: 2,
            mediaType: DOCKER_MANIFEST,
            config: { mediaType: 'application/vnd.docker.container.image.v1+json', digest: hash(config), size: config.length },
            layers: layers.map((l) => ({ mediaType: 'application/vnd.docker.image.rootfs.diff.tar', digest: hash(l!), size: l!.length })),
          }),
        );
        cd.blobs.set(hash(manifest), manifest);
        for (const tag of e.RepoTags ?? []) images.push({ name: normalizeDockerRef(tag), target: { mediaType: DOCKER_MANIFEST, digest: hash(manifest), size: manifest.length, annotations: {} } });
      }
    } else throw new Error(`${rel} is not an image archive`);
    // client.Import stores each name (labels it had kept), CRI marks it managed …
    for (const im of images) {
      const had = cd.records.get(im.name);
      await cd.createImage({ name: im.name, labels: { ...(had?.labels ?? {}), 'io.cri-containerd.image': 'managed' }, target: im.target });
    }
    // … then labelImages, then retagImages.
    const labels = { [distroPinLabel(this.info.distro === 'rke2' ? 'rke2' : 'k3s')]: PINNED, [CRI_PIN_LABEL]: PINNED };
    const names = images.map((i) => i.name);
    for (const name of names) await cd.updateImageLabels(name, labels);
    if (addsDigestRefs(this.info.distroVersion) === 'yes') {
      for (const im of images) {
        const parsed = parseNamedTagged(im.name);
        if ('error' in parsed) continue;
        const ref = `${parsed.repository}@${im.target.digest}`;
        if (ref === im.name) continue;
        await cd.createImage({ name: ref, labels: { 'io.cri-containerd.image': 'managed', ...labels }, target: im.target });
        names.push(ref);
      }
    }
    const cacheFile = this.files.files.get('.cache.json');
    const cache = cacheFile ? (JSON.parse(cacheFile.data.toString('utf8')) as Record<string, unknown>) : {};
    cache[`${this.def.imagesDir.replace(/\/+$/, '')}/${rel}`] = { size: f.data.length, modTime: new Date(f.mtime * 1000).toISOString().replace(/\.\d+Z$/, 'Z') };
    this.files.put('.cache.json', Buffer.from(JSON.stringify(cache)), Math.floor(Date.now() / 1000));
    return names;
  }

  /** Sessions open on this node. */
  readonly sessions = new Set<FakeSession>();
  private down: HoldfastError | null = null;

  /** A NodeSession over this node (the shape core uses; see src/core/node/session.ts). */
  async open(def: NodeDef, opts: OpenNodeOptions): Promise<FakeSession> {
    if (this.down) throw this.down;
    const refused = await this.spec.refuse?.(opts);
    if (refused) throw refused;
    this.opened++;
    this.def = def;
    const s = new FakeSession(this, def);
    this.sessions.add(s);
    return s;
  }

  /** The link drops: open sessions close, event streams fail, new connections are refused. */
  drop(message = `the SSH connection to ${this.def.host} dropped`): void {
    this.down = new HoldfastError('UNREACHABLE', message, { hint: 'Check the link to the node; Holdfast reconnects by itself.' });
    this.containerd.down = this.down;
    for (const s of this.sessions) {
      s.channel?.emit('close'); // an upload's writes stop at the channel's close, as over ssh2
      void s.close();
    }
    this.sessions.clear();
    for (const sub of [...this.containerd.subscriptions]) sub.fail(this.down);
    this.containerd.subscriptions.clear();
  }

  /** Whether the link is down. */
  get isDown(): boolean {
    return this.down !== null;
  }

  /** The link is back. */
  restore(): void {
    this.down = null;
    this.containerd.down = null;
  }
}

const DOCKER_MANIFEST = 'application/vnd.docker.distribution.manifest.v2+json';

/** A tar's regular files by member name (ustar without prefix, as the fake bundles write them). */
function untar(tar: Buffer): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (let off = 0; off + 512 <= tar.length; ) {
    const h = tar.subarray(off, off + 512);
    if (h.every((b) => b === 0)) break;
    const field = (at: number, len: number) => h.subarray(at, at + len).toString('utf8').replace(/\0.*$/s, '');
    const size = parseInt(field(124, 12).trim() || '0', 8);
    const type = h[156];
    if (type === 0x30 || type === 0) out.set(field(0, 100).replace(/^(\.\/)+/, ''), tar.subarray(off + 512, off + 512 + size));
    off += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}

const mtime0 = () => Math.floor(Date.parse('2025-03-01T00:00:00Z') / 1000);

const noSuchFile = (p: string) => Object.assign(new Error(`No such file: ${p}`), { code: 2 });

/**
 * The SFTP subsystem as core drives a session's channel (SessionSftp: uploads open, pipeline
 * writes, fsync and close; the disk checks stat and statvfs), over the node's files and link.
 * An EventEmitter as ssh2's channel is: it emits 'close' when the link drops.
 */
class FakeSftp extends EventEmitter implements SessionSftp {
  private readonly handles = new Map<string, string>();
  private next = 0;

  constructor(
    private readonly node: FakeNode,
    readonly ext_openssh_statvfs: SessionSftp['ext_openssh_statvfs'],
  ) {
    super();
  }

  stat(p: string, cb: (err: Error | undefined) => void): void {
    void this.node.files.stat(p).then((s) => cb(s ? undefined : noSuchFile(p)));
  }
  open(p: string, flags: 'w' | 'r+', _attrs: { mode: number }, cb: (err: Error | undefined, handle: Buffer) => void): void {
    const files = this.node.files;
    const rel = files.rel(p);
    const exists = rel !== null && files.files.has(rel);
    if (rel === null || (flags === 'r+' && !exists)) return void setImmediate(() => cb(noSuchFile(p), Buffer.alloc(0)));
    if (flags === 'w') files.put(rel, Buffer.alloc(0), Math.floor(Date.now() / 1000));
    const h = Buffer.from(String(++this.next));
    this.handles.set(h.toString(), rel);
    setImmediate(() => cb(undefined, h));
  }
  write(handle: Buffer, buf: Buffer, off: number, len: number, pos: number, cb: (err?: Error | null) => void): void {
    const node = this.node;
    const rel = this.handles.get(handle.toString());
    const data = Buffer.from(buf.subarray(off, off + len)); // the caller reuses its buffer once acknowledged
    void node.transfer(len).then(() => {
      if (node.isDown) return cb(new Error('No connection'));
      if (!rel || !node.files.files.has(rel)) return cb(new Error('Failure'));
      node.files.writeAt(rel, pos, data);
      cb(null);
    });
  }
  close(handle: Buffer, cb: (err?: Error | null) => void): void {
    this.handles.delete(handle.toString());
    setImmediate(() => cb(null));
  }
  ext_openssh_fsync(_handle: Buffer, cb: (err: Error | undefined) => void): void {
    setImmediate(() => cb(undefined));
  }
}

/** The needs script's output on a node: the sandbox config line, then kubectl's JSON or failure. */
function needsAnswer(cluster: FakeClusterAnswer | undefined): { code: number; stdout: string; stderr: string } {
  if (!cluster) return { code: 127, stdout: '@@sandbox\n@@kubectl\n', stderr: 'no kubectl on the node\n' };
  if ('code' in cluster) return { code: cluster.code, stdout: '@@sandbox\n@@kubectl\n', stderr: cluster.stderr };
  const sandbox = cluster.sandbox ? `    sandbox_image = "${cluster.sandbox}"\n` : '';
  return { code: 0, stdout: `@@sandbox\n${sandbox}@@kubectl\n${kubectlJson(cluster.workloads)}`, stderr: '' };
}

/** A NodeSession over one fake node (the interface core uses: src/core/node/session.ts). */
export class FakeSession implements NodeSession {
  private closed = false;
  channel: FakeSftp | undefined;
  private resolverCache: TargetResolver | undefined;
  readonly files: FakeFiles;
  readonly containerd: FakeContainerd;
  /** The fake writes no image content: direct delivery is tested on lab nodes only. */
  readonly writer = null;
  readonly ssh: SessionSsh;

  constructor(
    private readonly node: FakeNode,
    private nodeDef: NodeDef,
  ) {
    this.files = node.files;
    this.containerd = node.containerd;
    const self = this;
    const statvfs: SessionSftp['ext_openssh_statvfs'] = (_dir, cb) => {
      const unit = 4096;
      setImmediate(() => cb(undefined, { f_frsize: unit, f_bsize: unit, f_blocks: Math.round(node.disk.totalBytes / unit), f_bavail: Math.round(node.disk.freeBytes / unit), f_sid: 4242 }));
    };
    this.ssh = {
      get closed() {
        return self.closed;
      },
      where: `${nodeDef.user}@${nodeDef.host}:${nodeDef.port}`,
      login: { host: nodeDef.host, port: nodeDef.port, user: nodeDef.user },
      // No key an OpenSSH client could use: uploads go over the SFTP channel below.
      nativeAuth: null,
      via: undefined,
      hostKey: Buffer.alloc(0),
      // The needs script (one fixed script, its name as $0): the node's cluster answer. Anything
      // else is kubelet's settings: no running k3s process and no config files (kubelet's defaults).
      exec: async (argv: string[]) => (argv[3] === NEEDS_SCRIPT_NAME ? needsAnswer(node.spec.cluster) : { code: 0, stdout: '', stderr: '' }),
      spawn: async () => {
        throw new HoldfastError('INTERNAL', `the fake node ${nodeDef.name} runs no long-lived commands (its hashTools name no hasher)`);
      },
      sftp: async () => (self.channel ??= new FakeSftp(node, statvfs)),
      onClose: () => () => undefined,
      close: async () => undefined,
    };
  }

  get def(): NodeDef {
    return this.nodeDef;
  }
  get isClosed(): boolean {
    return this.closed;
  }
  followImagesDir(imagesDir: string): void {
    this.nodeDef = { ...this.nodeDef, imagesDir };
  }
  async detect(): Promise<NodeInfo> {
    await this.containerd.version();
    return structuredClone(this.node.info);
  }
  info(): Promise<NodeInfo> {
    return this.detect();
  }
  async platform() {
    return { ...PLATFORM };
  }
  /** No hashing while sending: the upload hashes the staged file afterwards (files.sha256). */
  async hashTools() {
    return { hasher: null, follow: false };
  }
  async resolver(): Promise<TargetResolver> {
    this.resolverCache ??= new TargetResolver(this.containerd, PLATFORM);
    return this.resolverCache;
  }
  async listBaseImages() {
    const [records, resolver] = await Promise.all([this.containerd.listImages(), this.resolver()]);
    return listImageRefs(records, resolver);
  }
  async close(): Promise<void> {
    this.closed = true;
  }
}

/** A NodeSession opener over these fake nodes (ServiceOptions.openSession). */
export function fakeOpener(nodes: Map<string, FakeNode>, elsewhere?: (def: NodeDef, opts: OpenNodeOptions) => Promise<HoldfastError>) {
  return async (def: NodeDef, opts: OpenNodeOptions): Promise<NodeSession> => {
    const n = nodes.get(def.name);
    if (!n) {
      // A node added in the test: what the rest of the fake network answers.
      throw elsewhere ? await elsewhere(def, opts) : new HoldfastError('UNREACHABLE', `Cannot reach ${def.host}:${def.port}.`, { hint: 'Check the address and that the node is powered and on the network.' });
    }
    return n.open(def, opts);
  };
}
