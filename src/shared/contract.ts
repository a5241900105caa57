// The one typed contract between the renderer and the process that owns the nodes
// (Electron main over IPC, or `holdfast serve` over loopback HTTP).
//
// Every channel has an argument schema (validated in main / the server, never trusted from
// the renderer) and a result type. Results and errors travel in one envelope. The zod-free
// half (operations, envelope, live events) is ./channels, re-exported here.
import type { NeedsReport } from './needs';
import type { EmbeddedRegistryConfig } from './embeddedRegistry';
import * as z from 'zod';
import type { DiskPicture } from './diskPicture';
import type { FleetReport } from './fleet';
import type { PrunePlan, PruneResult } from './prunePlan';
import type { ArchiveInfo, LocalArchive, RemovalCheck } from './domain/archives';
import type { AuditEntry } from './domain/audit';
import type { CredentialRequest, NodeStatus } from './domain/connection';
import type { ImageRef } from './domain/images';
import type { Job } from './domain/jobs';
import type { LostPin } from './domain/lostPins';
import type { NodeDef, NodeInfo } from './domain/nodes';
import type { PinPlan, PinTarget } from './domain/pins';
import type { ArchiveSignatureCheck, NodeVerifyOutcome } from './signatures';
import { operations, type Envelope, type Operation } from './channels';
import { PIN_SET_MAX_IMAGES, pinSetSpecSchema } from './pinSet';

export * from './channels';

// No parser generated with new Function() per schema: each process validates a handful of
// arguments, and generated code costs more to make than it saves (and no code cache keeps it).
z.config({ jitless: true });

const name = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" and "-" only');
const absPath = z.string().min(1).max(4096).refine((p) => p.startsWith('/'), 'must be an absolute path');
const localPath = z.string().min(1).max(4096);
const host = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[A-Za-z0-9._:%[\]-]+$/, 'a host name or IP address');

export const nodeInputSchema = z.strictObject({
  name,
  host,
  port: z.number().int().min(1).max(65535).optional(),
  user: z.string().min(1).max(64).regex(/^[a-z_][a-z0-9_.-]*\$?$/i, 'a user name').optional(),
  identity: localPath.optional(),
  knownHosts: localPath.optional(),
  socket: absPath.optional(),
  imagesDir: absPath.optional(),
  imagesDirSource: z.enum(['explicit', 'detected']).optional(),
  namespace: z.string().min(1).max(76).regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/).optional(),
  group: z.string().min(1).max(64).regex(/^[A-Za-z0-9][A-Za-z0-9 ._-]*$/, 'letters, digits, spaces, ".", "_" and "-"').optional(),
  sudo: z.boolean().optional(),
  jump: name.optional(),
  auth: z.enum(['publickey', 'password', 'keyboard-interactive']).optional(),
  // A Kubernetes Node name: a DNS subdomain (RFC 1123), as the API server validates it.
  k8sNode: z
    .string()
    .min(1)
    .max(253)
    .regex(/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/, 'a Kubernetes Node name (lower-case letters, digits, "-" and ".")')
    .optional(),
});

/** A path relative to the node's images dir: no absolute paths, no `..`, no NUL. */
const archivePath = z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => !p.startsWith('/') && !p.split('/').includes('..') && !p.includes('\0'), 'a path inside the images dir');
const imageRefName = z.string().min(1).max(4096).refine((r) => !/[\s\0]/.test(r), 'an image reference');

/** What a pin operation applies to: named references, one archive's images, every k3s pin, the needed images, a pin set. */
/** domain PinTarget, checked: the annotation makes the schema and the type one definition. */
export const pinTargetSchema: z.ZodType<PinTarget> = z.union([
  z.strictObject({ refs: z.array(imageRefName).min(1).max(10_000) }),
  z.strictObject({ archive: archivePath }),
  z.strictObject({ allK3s: z.literal(true) }),
  z.strictObject({ needed: z.literal(true) }),
  z.strictObject({ pinSet: pinSetSpecSchema }),
]);

/** An absolute path to a file on this machine (the laptop). */
const localFile = z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => (p.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p)) && !p.includes('\0'), 'an absolute path to a local file');

/** An image as prune names it: its image id (or target digest when it has none). */
const imageKey = z.string().regex(/^sha256:[0-9a-f]{64}$/, 'an image id (sha256:…)');
const keepVersions = z.number().int().min(1).max(100);

// Bounds of the knobs the CLI exposes (--parallel, --timeout, --concurrency): checked here, for
// every transport, not by each caller.
const parallel = z.number().int().min(1).max(64);
const importTimeout = z.number().min(1).max(3600);
const fleetConcurrency = z.number().int().min(1).max(1000);
const fleetTimeout = z.number().positive().max(3600);
/** A name in the images dir as given (upload --as); the upload itself says what it refuses and why. */
const remoteName = z.string().min(1).max(4096).refine((p) => !p.includes('\0'), 'a name in the images dir');

// Offline signature verification on this machine before anything is sent (shared/importOptions
// SignatureOptions, #48): key and bundle files are read here, never on the node.
/** A keyless identity or issuer as typed: a certificate's SAN or an issuer URL (both fit one containerd label). */
const keylessText = z.string().min(1).max(1024);
/** --certificate-identity-regexp, compiled here so a bad one is refused before any file is read. */
const identityRegexp = keylessText.refine((re) => {
  try {
    new RegExp(re);
    return true;
  } catch {
    return false;
  }
}, 'not a valid regular expression');

const signatureOptions = {
  keys: z.array(localFile).min(1).max(64).optional(),
  certificateIdentity: keylessText.optional(),
  certificateIdentityRegexp: identityRegexp.optional(),
  certificateOidcIssuer: keylessText.optional(),
  trustedRoot: localFile.optional(),
  bundles: z.array(localFile).min(1).max(1000).optional(),
  allowUnsigned: z.boolean().optional(),
  strictReference: z.boolean().optional(),
  // The site's signature policy (`--policy`); without it, the one in Holdfast's home if any.
  policy: localFile.optional(),
};

const fingerprint = z.string().regex(/^SHA256:[A-Za-z0-9+/]{43}$/, 'an OpenSSH SHA256 fingerprint');

export const channels = {
  'nodes.list': { args: z.strictObject({}), result: null as unknown as NodeDef[] },
  'nodes.add': { args: z.strictObject({ node: nodeInputSchema }), result: null as unknown as NodeDef },
  'nodes.update': {
    // expect: the node as the caller read it; saved only if nobody changed it since (else CONFLICT).
    args: z.strictObject({ name, node: nodeInputSchema, expect: nodeInputSchema.optional() }),
    result: null as unknown as NodeDef,
  },
  'nodes.remove': { args: z.strictObject({ name }), result: null as unknown as { removed: string } },
  'nodes.connect': { args: z.strictObject({ name }), result: null as unknown as NodeStatus },
  'nodes.trustHostKey': {
    args: z.strictObject({ name, fingerprint }),
    result: null as unknown as { recorded: string },
  },
  'images.list': { args: z.strictObject({ node: name }), result: null as unknown as ImageRef[] },
  // images.list from the same inventory, with every lost pin (also those whose reference is
  // gone) and the versions the node runs (what makes a pin honoured): the CLI's `images`.
  'images.report': {
    args: z.strictObject({ node: name }),
    result: null as unknown as { images: ImageRef[]; lost: LostPin[]; info: NodeInfo; needs: NeedsReport; embeddedRegistry?: EmbeddedRegistryConfig },
  },
  // The versions the node runs, detected once per session (the pooled session's, when open).
  'nodes.info': { args: z.strictObject({ node: name }), result: null as unknown as NodeInfo },
  'archives.list': { args: z.strictObject({ node: name }), result: null as unknown as ArchiveInfo[] },
  'pins.plan': {
    args: z.strictObject({ node: name, action: z.enum(['pin', 'unpin']), target: pinTargetSchema }),
    result: null as unknown as PinPlan,
  },
  'pins.apply': {
    args: z.strictObject({ node: name, action: z.enum(['pin', 'unpin']), target: pinTargetSchema }),
    result: null as unknown as PinPlan,
  },
  // Durable pins Holdfast made on the node (its audit log) that are gone now, with causes and remedy.
  'pins.lost': { args: z.strictObject({ node: name }), result: null as unknown as LostPin[] },
  'archives.check': { args: z.strictObject({ node: name, path: archivePath }), result: null as unknown as RemovalCheck },
  'archives.remove': {
    // force needs the archive's path typed again as confirmation (checked in main).
    args: z.strictObject({ node: name, path: archivePath, force: z.boolean().optional(), confirm: z.string().max(4096).optional() }),
    result: null as unknown as AuditEntry,
  },
  'audit.list': { args: z.strictObject({ node: name.optional() }), result: null as unknown as AuditEntry[] },
  // A native file dialog (desktop app only; the browser UI types or drops a path instead).
  'local.pickArchives': { args: z.strictObject({}), result: null as unknown as { paths: string[] } },
  'local.inspect': { args: z.strictObject({ path: localFile }), result: null as unknown as LocalArchive },
  // A native file dialog for cosign public keys or detached bundles (desktop app only, as above).
  'local.pickSignatureFiles': { args: z.strictObject({ kind: z.enum(['keys', 'bundles']) }), result: null as unknown as { paths: string[] } },
  // Every image's signature verdict for an archive on this machine, before an import: read with
  // the given keys and bundles here, nothing sent to any node, no image refused (#48).
  'signatures.checkArchive': {
    args: z.strictObject({
      path: localFile,
      keys: signatureOptions.keys.unwrap(),
      bundles: signatureOptions.bundles,
      strictReference: signatureOptions.strictReference,
      // Read as a direct delivery reads it (cosign `.sig` tags left out, not refused).
      direct: z.boolean().optional(),
    }),
    result: null as unknown as ArchiveSignatureCheck,
  },
  'jobs.startImport': {
    args: z.strictObject({
      nodes: z.array(name).min(1).max(500),
      path: localFile,
      pin: z.boolean(),
      removeArchive: z.boolean(),
      // Nodes at a time; seconds per node to wait for k3s to import (defaults: shared/importOptions.ts).
      parallel: parallel.optional(),
      timeout: importTimeout.optional(),
      // Straight into containerd over the tunnel, only missing blobs (usecases/direct).
      direct: z.boolean().optional(),
      ...signatureOptions,
    }),
    result: null as unknown as Job,
  },
  // One archive into one node's images dir, verified and resumable, no import (`holdfast upload`).
  // Like startImport, a bad archive is refused before the job starts: nothing is sent.
  'jobs.startUpload': {
    args: z.strictObject({ node: name, path: localFile, as: remoteName.optional(), ...signatureOptions }),
    result: null as unknown as Job,
  },
  'jobs.list': { args: z.strictObject({}), result: null as unknown as Job[] },
  'jobs.cancel': { args: z.strictObject({ id: z.string().min(1).max(64) }), result: null as unknown as Job },
  // A secret typed by the person for an open credentials request (null = Cancel). It goes to
  // ssh2 and is dropped: never stored, logged or sent back to any window.
  'credentials.answer': {
    args: z.strictObject({ id: z.string().min(1).max(64), answers: z.array(z.string().max(4096)).max(16).nullable() }),
    result: null as unknown as { answered: true },
  },
  'credentials.pending': { args: z.strictObject({}), result: null as unknown as CredentialRequest[] },
  // Inspect many nodes at once; results arrive as fleet.node events, then fleet.done.
  // concurrency: nodes at once (default 64); timeout: seconds per node for connect + inventory (default 30).
  'fleet.start': {
    args: z.strictObject({
      nodes: z.array(name).max(1000).optional(),
      group: z.string().min(1).max(64).optional(),
      concurrency: fleetConcurrency.optional(),
      timeout: fleetTimeout.optional(),
      // Each reached node's disk picture without images too (the metrics series), on its own connection.
      diskPicture: z.boolean().optional(),
    }),
    result: null as unknown as { runId: string; nodes: string[] },
  },
  // Stops a run: the nodes that have not answered are reported cancelled, and its report still
  // arrives as fleet.done (a run replaced by a newer fleet.start reports nothing).
  'fleet.cancel': { args: z.strictObject({ runId: z.string().min(1).max(64) }), result: null as unknown as { cancelled: boolean } },
  'fleet.last': { args: z.strictObject({}), result: null as unknown as FleetReport | null },
  // The node's disk as kubelet's image GC sees it; images: false measures only the file systems
  // and thresholds (the fleet overview), without walking the image store.
  'disk.picture': { args: z.strictObject({ node: name, images: z.boolean().optional() }), result: null as unknown as DiskPicture },
  // What prune would remove (nothing changes on the node).
  'prune.plan': { args: z.strictObject({ node: name, keepVersions: keepVersions.optional() }), result: null as unknown as PrunePlan },
  // Removes the previewed images that a fresh plan still removes; the node's name typed as
  // confirmation (checked in main), since a removed image is gone from an air-gapped site.
  'prune.apply': {
    args: z.strictObject({ node: name, keepVersions: keepVersions.optional(), images: z.array(imageKey).min(1).max(10_000), confirm: z.string().max(64) }),
    result: null as unknown as PruneResult,
  },
  // The images already on nodes checked against the keys, bundles and signature layouts (OCI
  // layout directories or archives) the technician carries; each verdict recorded on the image's
  // references as provenance labels, unless dryRun. Nothing else on the node changes.
  'signatures.verify': {
    args: z.strictObject({
      nodes: z.array(name).min(1).max(500),
      keys: signatureOptions.keys.unwrap(),
      bundles: signatureOptions.bundles,
      layouts: z.array(localFile).min(1).max(64).optional(),
      dryRun: z.boolean().optional(),
    }),
    result: null as unknown as NodeVerifyOutcome[],
  },
  'fleet.export': {
    args: z.strictObject({ format: z.enum(['html', 'csv', 'json']) }),
    result: null as unknown as { filename: string; mime: string; content: string },
  },
  // A pin set of the images the technician selected, as its file or the ConfigMap holding it
  // (shared/pinSet pinSetText). The desktop app saves it through a native save dialog (`saved`:
  // the path, or null when cancelled); `serve` returns it to download (`download`).
  'pinset.save': {
    args: z.strictObject({ name: z.string().min(1).max(253), images: z.array(z.string().min(1).max(512)).min(1).max(PIN_SET_MAX_IMAGES), as: z.enum(['pinset', 'configmap']) }),
    result: null as unknown as { saved: string | null } | { download: { filename: string; mime: string; content: string } },
  },
} as const;

export type Channel = keyof typeof channels;
export type ArgsOf<C extends Channel> = z.infer<(typeof channels)[C]['args']>;
export type ResultOf<C extends Channel> = (typeof channels)[C]['result'];

// Every named operation is bound to a channel that has a schema here (compile-time check).
void (operations satisfies Record<Operation, Channel>);

export type HoldfastApi = {
  [O in Operation]: (args: ArgsOf<(typeof operations)[O]>) => Promise<Envelope<ResultOf<(typeof operations)[O]>>>;
};

/** Validate untrusted arguments for a channel; throws a zod error on bad input. */
export function parseArgs<C extends Channel>(channel: C, raw: unknown): ArgsOf<C> {
  return channels[channel].args.parse(raw ?? {}) as ArgsOf<C>;
}

export function isChannel(value: string): value is Channel {
  return Object.prototype.hasOwnProperty.call(channels, value);
}
