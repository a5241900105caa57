// A small, typed client for the containerd services Holdfast needs, speaking gRPC over a
// unix socket (the local end of the SSH tunnel). One channel per node multiplexes all calls.
import * as grpc from '@grpc/grpc-js';
import path from 'node:path';
import { HoldfastError } from '../errors';
import { protoDir } from './protoDir';
import { codecNamed, loadMethodTables, type Codec, type MethodInfo } from './methods';
import { writeBlobStream, type BlobWrite } from './contentWrite';
import { containerdUnavailableText } from './unavailable';
import { gcLabelWriteRefusal } from '../../shared/protection';

export type { BlobWrite } from './contentWrite';

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations: Record<string, string>;
}

/** An image as containerd's images API returns it (its target not yet resolved for a platform). */
export interface ContainerdImage {
  name: string;
  labels: Record<string, string>;
  target: Descriptor;
  createdAt: Date | null;
  updatedAt: Date | null;
}

export interface ContentInfo {
  digest: string;
  size: number;
  labels: Record<string, string>;
}

/** A container record: the image it names counts as in use. */
export interface ContainerRecord {
  id: string;
  labels: Record<string, string>;
  /** The image reference it was made from (tag, digest reference or image id); '' when none. */
  image: string;
  runtime: string;
  createdAt: Date | null;
  updatedAt: Date | null;
}

/** A containerd plugin as Introspection reports it (exports such as `root`, and whether it works). */
export interface PluginInfo {
  type: string;
  id: string;
  exports: Record<string, string>;
  /** Why the plugin failed to initialise; null when it works. */
  initError: string | null;
}

export interface EventEnvelope {
  timestamp: Date | null;
  namespace: string;
  topic: string;
  /** e.g. containerd.services.images.v1.ImageUpdate */
  typeUrl: string;
  /** Decoded payload for image events; undefined for other types. */
  image?: { name: string; labels: Record<string, string> };
}

export interface EventSubscription {
  on(event: 'event', cb: (e: EventEnvelope) => void): EventSubscription;
  on(event: 'error', cb: (e: HoldfastError) => void): EventSubscription;
  on(event: 'end', cb: () => void): EventSubscription;
  cancel(): void;
}

/* oxlint-disable typescript/no-explicit-any -- grpc-js loads the services at run time: untyped stubs and messages */
type Unary = (req: unknown, md: grpc.Metadata, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: any) => void) => void;
type ServiceClient = grpc.Client & Record<string, any>;

let payloadTypeCache: Record<string, Codec> | undefined;

let loadedMethods: Map<string, MethodInfo[]> | undefined;
const serviceCtors = new Map<string, grpc.ServiceClientConstructor>();

/** Our containerd services' methods, loaded once (methods.ts). */
function methodTable(): Map<string, MethodInfo[]> {
  loadedMethods ??= loadMethodTables(path.join(protoDir(), 'containerd'));
  return loadedMethods;
}

/** Decoders for the Any payloads of image events (type_url has no googleapis prefix). */
function eventTypes(): Record<string, Codec> {
  if (payloadTypeCache) return payloadTypeCache;
  payloadTypeCache = {};
  for (const t of ['ImageCreate', 'ImageUpdate', 'ImageDelete']) {
    const full = `containerd.services.images.v1.${t}`;
    payloadTypeCache[full] = codecNamed(full)!;
  }
  return payloadTypeCache;
}

// What messages look like to the code below: int64 as numbers, enums as names, unset fields
// with their defaults, oneofs named.
const TO_OBJECT = { longs: Number, enums: String, defaults: true, oneofs: true };

/**
 * Responses read as protobufjs decodes them, without the plain-object copy: the image list, 1,000
 * references and more, which its reader (containerdImage) copies field by field anyway. A decoded
 * message has the same fields, with their defaults, but int64 as Long (int64() reads both).
 */
const AS_DECODED = new Set(['containerd.services.images.v1.Images/List']);

/**
 * A grpc-js client class for one service, from our method table and static codecs. Why not
 * @grpc/proto-loader: it converts every file to descriptor protos and back, about 250 ms of CPU
 * at each CLI start before the first call, for nothing we use; this builds the same method
 * table (path, streaming, serialize/deserialize) in well under a millisecond.
 */
function serviceCtor(fullName: string): grpc.ServiceClientConstructor {
  const known = serviceCtors.get(fullName);
  if (known) return known;
  const methods = methodTable().get(fullName);
  if (!methods) throw new Error(`service ${fullName} is not in descriptors.json`);
  const def: Record<string, grpc.MethodDefinition<any, any>> = {};
  for (const m of methods) {
    const { request: req, response: res } = m;
    def[m.name] = {
      path: `/${fullName}/${m.name}`,
      requestStream: m.requestStream,
      responseStream: m.responseStream,
      requestSerialize: (o: any) => Buffer.from(req.encode(req.fromObject(o)).finish()),
      requestDeserialize: (b: Buffer) => req.toObject(req.decode(b), TO_OBJECT),
      responseSerialize: (o: any) => Buffer.from(res.encode(res.fromObject(o)).finish()),
      responseDeserialize: AS_DECODED.has(`${fullName}/${m.name}`) ? (b: Buffer) => res.decode(b) : (b: Buffer) => res.toObject(res.decode(b), TO_OBJECT),
      originalName: m.name,
    };
  }
  const ctor = grpc.makeGenericClientConstructor(def, fullName);
  serviceCtors.set(fullName, ctor);
  return ctor;
}

/** The services a client holds, by the name its methods use. */
const SERVICES: Record<string, string> = {
  version: 'containerd.services.version.v1.Version',
  namespaces: 'containerd.services.namespaces.v1.Namespaces',
  images: 'containerd.services.images.v1.Images',
  content: 'containerd.services.content.v1.Content',
  events: 'containerd.services.events.v1.Events',
  leases: 'containerd.services.leases.v1.Leases',
  containers: 'containerd.services.containers.v1.Containers',
  introspection: 'containerd.services.introspection.v1.Introspection',
  snapshots: 'containerd.services.snapshots.v1.Snapshots',
  diff: 'containerd.services.diff.v1.Diff',
};

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Everything a client needs that does not depend on a node: the definitions and each service's
 * method table (the codecs are static: codecs.generated.ts). A session runs this while its SSH
 * handshake waits on the server (NodeSession.open), in steps so the handshake's packets are
 * handled in between; a client made before it finished simply does the rest itself. Failures
 * are left for the constructor to report.
 */
export function prepareContainerdClient(): Promise<void> {
  // Once per process: every later session (a fleet run opens many) finds it all made.
  preparing ??= prepareOnce();
  return preparing;
}
let preparing: Promise<void> | undefined;

async function prepareOnce(): Promise<void> {
  try {
    methodTable();
    for (const svc of Object.values(SERVICES)) {
      await nextTurn();
      serviceCtor(svc);
    }
  } catch {
    // e.g. no .proto files: new ContainerdClient() throws the error a person can act on
  }
}

const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  // Image lists of 10,000+ references exceed grpc-js's 4 MiB default.
  'grpc.max_receive_message_length': 256 * 1024 * 1024,
  'grpc.max_send_message_length': 64 * 1024 * 1024,
  // The authority is irrelevant over a unix socket; keep it short and stable.
  'grpc.default_authority': 'localhost',
};

/** An int64 as a number: toObject gives numbers, a message decoded as-is (AS_DECODED) a Long. */
function int64(v: unknown): number {
  return typeof v === 'object' && v !== null ? (v as { toNumber(): number }).toNumber() : Number(v ?? 0);
}

/** A Timestamp, from toObject or decoded as-is. */
function timestamp(ts: { seconds?: unknown; nanos?: unknown } | null | undefined): Date | null {
  if (!ts) return null;
  const seconds = int64(ts.seconds);
  const nanos = Number(ts.nanos ?? 0);
  if (!seconds && !nanos) return null;
  return new Date(seconds * 1000 + Math.floor(nanos / 1e6));
}

function descriptor(d: any): Descriptor {
  return {
    mediaType: d?.media_type ?? '',
    digest: d?.digest ?? '',
    size: int64(d?.size),
    annotations: { ...(d?.annotations ?? {}) },
  };
}

function toProtoDescriptor(d: Descriptor): Record<string, unknown> {
  return { media_type: d.mediaType, digest: d.digest, size: d.size, annotations: d.annotations };
}

/** The keys of a label change, each safe as one `labels.<key>` mask path. */
/**
 * Refuses a write that sets or removes a label containerd's own GC acts on (gc.bref.*, gc.cond.*,
 * gc.expire: shared/protection isGcControlLabel). Every image, blob and snapshot label write of
 * this client goes through it, so no path (pin plans, direct delivery) can write one.
 */
export function refuseGcControlLabels(what: string, keys: Iterable<string>): void {
  const refusal = gcLabelWriteRefusal(what, keys);
  if (refusal) throw new HoldfastError('INTERNAL', refusal);
}

function checkLabelKeys(changes: Record<string, string | null>, what: string): string[] {
  const keys = Object.keys(changes);
  for (const k of keys) {
    if (!k || k.includes('\n')) throw new Error(`invalid label key ${JSON.stringify(k)}`);
  }
  refuseGcControlLabels(what, keys);
  return keys;
}

function containerdImage(i: any): ContainerdImage {
  return {
    name: i.name,
    labels: { ...(i.labels ?? {}) },
    target: descriptor(i.target),
    createdAt: timestamp(i.created_at),
    updatedAt: timestamp(i.updated_at),
  };
}

export interface ContainerdClientOptions {
  /** gRPC target, e.g. `unix:/tmp/hf-xyz/c.sock`. */
  target: string;
  namespace: string;
  /** Shown in errors so the user knows which node and socket failed. */
  describe?: string;
  /** The target is Holdfast's SSH tunnel to the node's socket (errors say so). */
  overSsh?: boolean;
  callTimeoutMs?: number;
}

/**
 * What core asks of containerd: the seam the gRPC client below and the UI tests' fake containerd
 * (test/doubles) both implement, so the compiler checks the double against what core calls.
 * Narrow on purpose: a method goes here only once core calls it.
 */
export interface ContainerdClient {
  version(): Promise<{ version: string; revision: string }>;
  listImages(): Promise<ContainerdImage[]>;
  getImage(name: string): Promise<ContainerdImage | null>;
  /** Sets (string) or deletes (null) individual labels; other labels stay as they are. */
  updateImageLabels(name: string, changes: Record<string, string | null>): Promise<ContainerdImage>;
  /** sync: wait for containerd's garbage collection (the blobs gone) before answering. */
  deleteImage(name: string, sync?: boolean): Promise<void>;
  /** Blob metadata, or null when the blob is absent from the namespace's content store. */
  contentInfo(digest: string): Promise<ContentInfo | null>;
  /** A whole (small) blob: manifest, index or config. */
  readContent(digest: string): Promise<Buffer>;
  subscribe(filters: string[]): EventSubscription;
  listContainers(): Promise<ContainerRecord[]>;
  /** containerd's plugins matching the filters, e.g. ['type==io.containerd.content.v1']. */
  plugins(filters: string[]): Promise<PluginInfo[]>;
  close(): void;
}

/** A mount as a snapshotter hands it out (what Diff.Apply extracts a layer onto). */
export interface Mount {
  type: string;
  source: string;
  target: string;
  options: string[];
}

/** Where an unfinished write stands (Content.Status), or null when there is none. */
export interface WriteStatus {
  ref: string;
  offset: number;
  total: number;
  expected: string;
}

/**
 * What direct delivery (core/usecases/direct) asks of containerd to write images into a node as
 * containerd's own client does (docs/k3s-facts.md, "containerd's API, as Holdfast uses it"). Every
 * call carries the lease given, so nothing written is collected before its labels are in place.
 */
export interface ContainerdWriter {
  createLease(id: string, labels?: Record<string, string>): Promise<void>;
  deleteLease(id: string): Promise<void>;
  /** The unfinished write under ref (bytes already there), or null. */
  writeStatus(ref: string, lease: string): Promise<WriteStatus | null>;
  /** Sends a blob from where an earlier write stopped; containerd checks digest and size at commit. Returns the bytes sent now. */
  writeBlob(blob: BlobWrite, lease: string): Promise<number>;
  /** Sets (string) or deletes (null) labels of a committed blob, one mask path each. */
  updateContentLabels(digest: string, changes: Record<string, string | null>, lease: string): Promise<ContentInfo>;
  /** A snapshot's info, or null when there is none under key. */
  statSnapshot(snapshotter: string, key: string): Promise<{ name: string; parent: string; kind: string; labels: Record<string, string> } | null>;
  prepareSnapshot(snapshotter: string, key: string, parent: string, lease: string, labels?: Record<string, string>): Promise<Mount[]>;
  commitSnapshot(snapshotter: string, name: string, key: string, lease: string, labels?: Record<string, string>): Promise<void>;
  removeSnapshot(snapshotter: string, key: string, lease: string): Promise<void>;
  /** Extracts a layer onto mounts; returns the uncompressed blob's descriptor (its digest is the diff ID). */
  applyDiff(layer: Descriptor, mounts: Mount[], lease: string): Promise<Descriptor>;
  createImage(image: { name: string; labels?: Record<string, string>; target: Descriptor }, lease?: string): Promise<ContainerdImage>;
  /** Points an existing image at target and sets or deletes the labels given; other labels stay. */
  updateImage(name: string, target: Descriptor, changes: Record<string, string | null>, lease?: string): Promise<ContainerdImage>;
}

/** ContainerdClient over gRPC on a unix socket (the local end of a session's SSH tunnel). */
export class GrpcContainerdClient implements ContainerdClient, ContainerdWriter {
  readonly namespace: string;
  private readonly describe: string;
  private readonly overSsh: boolean;
  private readonly timeoutMs: number;
  private readonly channel: grpc.Channel;
  private readonly clients: Record<string, ServiceClient> = {};

  constructor(opts: ContainerdClientOptions) {
    this.namespace = opts.namespace;
    this.describe = opts.describe ?? opts.target;
    this.overSsh = opts.overSsh ?? false;
    this.timeoutMs = opts.callTimeoutMs ?? 20_000;
    this.channel = new grpc.Channel(opts.target, grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
    for (const [key, svc] of Object.entries(SERVICES)) {
      const Ctor = serviceCtor(svc);
      // All service clients share the one channel (one SSH channel per node).
      this.clients[key] = new Ctor(opts.target, grpc.credentials.createInsecure(), {
        channelOverride: this.channel,
      }) as ServiceClient;
    }
  }

  private metadata(namespace = this.namespace, lease?: string): grpc.Metadata {
    const md = new grpc.Metadata();
    md.set('containerd-namespace', namespace);
    if (lease) md.set('containerd-lease', lease);
    return md;
  }

  private unary<T>(service: string, method: string, req: unknown, namespace?: string, lease?: string, timeoutMs = this.timeoutMs): Promise<T> {
    const client = this.clients[service]!;
    const fn = client[method] as Unary;
    return new Promise<T>((resolve, reject) => {
      fn.call(client, req, this.metadata(namespace, lease), { deadline: Date.now() + timeoutMs }, (err, res) => {
        if (err) reject(this.mapError(err, `${service}.${method}`));
        else resolve(res as T);
      });
    });
  }

  /** Turns gRPC status codes into errors a technician can act on. */
  mapError(err: grpc.ServiceError, what: string): HoldfastError {
    switch (err.code) {
      case grpc.status.UNAVAILABLE: {
        // grpc-js's own words ("No connection established. Last error: …") stay in the cause.
        const { message, hint } = containerdUnavailableText(err.details ?? '', this.describe, this.overSsh);
        return new HoldfastError('CONTAINERD_UNAVAILABLE', message, { hint, cause: err });
      }
      case grpc.status.DEADLINE_EXCEEDED:
        return new HoldfastError('TIMEOUT', `containerd did not answer ${what} within ${Math.round(this.timeoutMs / 1000)} s on ${this.describe}`, { cause: err });
      case grpc.status.NOT_FOUND:
        return new HoldfastError('NOT_FOUND', err.details || `${what}: not found`, { cause: err });
      case grpc.status.ALREADY_EXISTS:
      case grpc.status.FAILED_PRECONDITION:
        return new HoldfastError('CONFLICT', err.details || `${what}: conflict`, { cause: err });
      case grpc.status.INVALID_ARGUMENT:
        return new HoldfastError('INVALID_INPUT', err.details || `${what}: invalid argument`, { cause: err });
      default:
        return new HoldfastError('INTERNAL', `containerd ${what} failed: ${err.details || err.message}`, { cause: err });
    }
  }

  async version(): Promise<{ version: string; revision: string }> {
    const res = await this.unary<{ version: string; revision: string }>('version', 'Version', {});
    return { version: res.version, revision: res.revision };
  }

  async listNamespaces(): Promise<string[]> {
    const res = await this.unary<{ namespaces: { name: string }[] }>('namespaces', 'List', {});
    return res.namespaces.map((n) => n.name);
  }

  async listImages(filters: string[] = []): Promise<ContainerdImage[]> {
    const res = await this.unary<{ images: unknown[] }>('images', 'List', { filters });
    return res.images.map(containerdImage);
  }

  async getImage(name: string): Promise<ContainerdImage | null> {
    try {
      const res = await this.unary<{ image: unknown }>('images', 'Get', { name });
      return containerdImage(res.image);
    } catch (e) {
      if (e instanceof HoldfastError && e.code === 'NOT_FOUND') return null;
      throw e;
    }
  }

  async createImage(image: { name: string; labels?: Record<string, string>; target: Descriptor }, lease?: string): Promise<ContainerdImage> {
    refuseGcControlLabels(image.name, Object.keys(image.labels ?? {}));
    const res = await this.unary<{ image: unknown }>(
      'images',
      'Create',
      { image: { name: image.name, labels: image.labels ?? {}, target: toProtoDescriptor(image.target) } },
      undefined,
      lease,
    );
    return containerdImage(res.image);
  }

  async updateImage(name: string, target: Descriptor, changes: Record<string, string | null>, lease?: string): Promise<ContainerdImage> {
    const keys = checkLabelKeys(changes, name);
    const labels: Record<string, string> = {};
    for (const k of keys) if (changes[k]) labels[k] = changes[k];
    // The mask names the target and each changed label, never `labels`: other labels stay.
    const res = await this.unary<{ image: unknown }>(
      'images',
      'Update',
      { image: { name, labels, target: toProtoDescriptor(target) }, update_mask: { paths: ['target', ...keys.map((k) => `labels.${k}`)] } },
      undefined,
      lease,
    );
    return containerdImage(res.image);
  }

  /**
   * Sets (string) or deletes (null) individual labels. Each key gets its own
   * `labels.<key>` mask path so labels written concurrently by others are never clobbered.
   */
  async updateImageLabels(name: string, changes: Record<string, string | null>): Promise<ContainerdImage> {
    const keys = checkLabelKeys(changes, name);
    if (keys.length === 0) throw new Error('updateImageLabels: no label changes given');
    // containerd 1.7.x and 2.x dereference the image's target before they look at the mask: an
    // Update without it panics the whole daemon (on k3s: k3s restarts and strips every k3s pin).
    // So the request carries the full record as read (name, target, labels), and the mask names
    // only the keys that change, so nothing else is replaced.
    const current = await this.getImage(name);
    if (!current) throw new HoldfastError('NOT_FOUND', `image ${name} not found`);
    if (!current.target.digest || !current.target.mediaType) {
      throw new HoldfastError('INTERNAL', `image ${name} has no target in containerd's answer; not updating it`);
    }
    const labels: Record<string, string> = { ...current.labels };
    for (const k of keys) {
      const v = changes[k];
      if (v !== null && v !== undefined && v !== '') labels[k] = v;
      else delete labels[k];
    }
    const res = await this.unary<{ image: unknown }>('images', 'Update', {
      image: { name, labels, target: toProtoDescriptor(current.target) },
      update_mask: { paths: keys.map((k) => `labels.${k}`) },
    });
    return containerdImage(res.image);
  }

  async deleteImage(name: string, sync = false): Promise<void> {
    await this.unary('images', 'Delete', { name, sync });
  }

  /** Blob metadata, or null when the blob is absent from the namespace's content store. */
  async contentInfo(digest: string): Promise<ContentInfo | null> {
    try {
      const res = await this.unary<{ info: { digest: string; size: number; labels: Record<string, string> } }>('content', 'Info', { digest });
      return { digest: res.info.digest, size: Number(res.info.size), labels: { ...(res.info.labels ?? {}) } };
    } catch (e) {
      if (e instanceof HoldfastError && e.code === 'NOT_FOUND') return null;
      throw e;
    }
  }

  /** Reads a whole (small) blob such as a manifest, index or config; refuses large ones. */
  readContent(digest: string, maxBytes = 8 * 1024 * 1024): Promise<Buffer> {
    const client = this.clients.content!;
    return new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let total = 0;
      let done = false;
      const call: grpc.ClientReadableStream<{ data: Buffer }> = client.Read(
        { digest, offset: 0, size: 0 },
        this.metadata(),
        { deadline: Date.now() + this.timeoutMs },
      );
      call.on('data', (msg: { data: Buffer }) => {
        total += msg.data.length;
        if (total > maxBytes) {
          done = true;
          call.cancel();
          reject(new HoldfastError('INTERNAL', `blob ${digest} is larger than ${maxBytes} bytes`));
          return;
        }
        chunks.push(msg.data);
      });
      call.on('error', (err: grpc.ServiceError) => {
        if (!done) {
          done = true;
          reject(this.mapError(err, 'content.Read'));
        }
      });
      call.on('end', () => {
        if (!done) {
          done = true;
          resolve(Buffer.concat(chunks));
        }
      });
    });
  }

  /** Subscribes to containerd's event stream; always filter by namespace (it streams all). */
  subscribe(filters: string[]): EventSubscription {
    const client = this.clients.events!;
    const call: grpc.ClientReadableStream<any> = client.Subscribe({ filters }, this.metadata());
    const handlers: { event: ((e: EventEnvelope) => void)[]; error: ((e: HoldfastError) => void)[]; end: (() => void)[] } = {
      event: [],
      error: [],
      end: [],
    };
    let cancelled = false;
    call.on('data', (env: any) => {
      const typeUrl: string = env.event?.type_url ?? '';
      const out: EventEnvelope = { timestamp: timestamp(env.timestamp), namespace: env.namespace, topic: env.topic, typeUrl };
      const type = eventTypes()[typeUrl.replace(/^type\.googleapis\.com\//, '')];
      if (type && env.event?.value) {
        const msg = type.toObject(type.decode(env.event.value), { defaults: true }) as { name: string; labels?: Record<string, string> };
        out.image = { name: msg.name, labels: { ...(msg.labels ?? {}) } };
      }
      for (const h of handlers.event) h(out);
    });
    call.on('error', (err: grpc.ServiceError) => {
      if (cancelled && err.code === grpc.status.CANCELLED) return;
      const e = this.mapError(err, 'events.Subscribe');
      for (const h of handlers.error) h(e);
    });
    call.on('end', () => {
      for (const h of handlers.end) h();
    });
    const sub: EventSubscription = {
      on(event: 'event' | 'error' | 'end', cb: any) {
        (handlers[event] as any[]).push(cb);
        return sub;
      },
      cancel() {
        cancelled = true;
        call.cancel();
      },
    };
    return sub;
  }

  /** Container records of the namespace (records only: whether a task runs does not matter for "in use"). */
  async listContainers(filters: string[] = []): Promise<ContainerRecord[]> {
    const res = await this.unary<{ containers: any[] }>('containers', 'List', { filters });
    return res.containers.map((c) => ({
      id: c.id,
      labels: { ...(c.labels ?? {}) },
      image: c.image ?? '',
      runtime: c.runtime?.name ?? '',
      createdAt: timestamp(c.created_at),
      updatedAt: timestamp(c.updated_at),
    }));
  }

  /** containerd's plugins (not namespaced), e.g. filters ['type==io.containerd.content.v1']. */
  async plugins(filters: string[] = []): Promise<PluginInfo[]> {
    const res = await this.unary<{ plugins: any[] }>('introspection', 'Plugins', { filters });
    return res.plugins.map((p) => ({
      type: p.type,
      id: p.id,
      exports: { ...(p.exports ?? {}) },
      initError: p.init_err && (p.init_err.code || p.init_err.message) ? p.init_err.message || `code ${p.init_err.code}` : null,
    }));
  }

  async createLease(id: string, labels: Record<string, string> = {}): Promise<void> {
    await this.unary('leases', 'Create', { id, labels });
  }

  async deleteLease(id: string): Promise<void> {
    await this.unary('leases', 'Delete', { id, sync: false });
  }

  async writeStatus(ref: string, lease: string): Promise<WriteStatus | null> {
    try {
      const res = await this.unary<{ status: { ref: string; offset: number; total: number; expected: string } | null }>('content', 'Status', { ref }, undefined, lease);
      if (!res.status) return null;
      return { ref: res.status.ref, offset: Number(res.status.offset), total: Number(res.status.total), expected: res.status.expected };
    } catch (e) {
      if (e instanceof HoldfastError && e.code === 'NOT_FOUND') return null;
      throw e;
    }
  }

  async writeBlob(blob: BlobWrite, lease: string): Promise<number> {
    refuseGcControlLabels(blob.digest, Object.keys(blob.labels));
    return writeBlobStream(this, blob, lease);
  }

  /** The duplex Content.Write call for writeBlob (no deadline: a layer may take long; cancel stops it). */
  openWrite(lease: string): grpc.ClientDuplexStream<any, any> {
    return this.clients.content!.Write(this.metadata(undefined, lease)) as grpc.ClientDuplexStream<any, any>;
  }

  async updateContentLabels(digest: string, changes: Record<string, string | null>, lease: string): Promise<ContentInfo> {
    const keys = checkLabelKeys(changes, digest);
    const labels: Record<string, string> = {};
    for (const k of keys) if (changes[k]) labels[k] = changes[k];
    const res = await this.unary<{ info: { digest: string; size: number; labels: Record<string, string> } }>(
      'content',
      'Update',
      { info: { digest, labels }, update_mask: { paths: keys.map((k) => `labels.${k}`) } },
      undefined,
      lease,
    );
    return { digest: res.info.digest, size: Number(res.info.size), labels: { ...(res.info.labels ?? {}) } };
  }

  async statSnapshot(snapshotter: string, key: string): Promise<{ name: string; parent: string; kind: string; labels: Record<string, string> } | null> {
    try {
      const res = await this.unary<{ info: { name: string; parent: string; kind: string; labels: Record<string, string> } }>('snapshots', 'Stat', { snapshotter, key });
      return { name: res.info.name, parent: res.info.parent, kind: res.info.kind, labels: { ...(res.info.labels ?? {}) } };
    } catch (e) {
      if (e instanceof HoldfastError && e.code === 'NOT_FOUND') return null;
      throw e;
    }
  }

  async prepareSnapshot(snapshotter: string, key: string, parent: string, lease: string, labels: Record<string, string> = {}): Promise<Mount[]> {
    refuseGcControlLabels(`snapshot ${key}`, Object.keys(labels));
    const res = await this.unary<{ mounts: Mount[] }>('snapshots', 'Prepare', { snapshotter, key, parent, labels }, undefined, lease);
    return res.mounts.map((m) => ({ type: m.type, source: m.source, target: m.target, options: [...(m.options ?? [])] }));
  }

  async commitSnapshot(snapshotter: string, name: string, key: string, lease: string, labels: Record<string, string> = {}): Promise<void> {
    refuseGcControlLabels(`snapshot ${name}`, Object.keys(labels));
    await this.unary('snapshots', 'Commit', { snapshotter, name, key, labels }, undefined, lease);
  }

  async removeSnapshot(snapshotter: string, key: string, lease: string): Promise<void> {
    await this.unary('snapshots', 'Remove', { snapshotter, key }, undefined, lease);
  }

  async applyDiff(layer: Descriptor, mounts: Mount[], lease: string): Promise<Descriptor> {
    // Extracting a large layer takes as long as the node's disk needs: no short deadline.
    const res = await this.unary<{ applied: unknown }>('diff', 'Apply', { diff: toProtoDescriptor(layer), mounts }, undefined, lease, 60 * 60_000);
    return descriptor(res.applied);
  }

  close(): void {
    for (const c of Object.values(this.clients)) c.close();
    this.channel.close();
  }
}

