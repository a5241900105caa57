// Every bound Holdfast puts on input it does not control, in one place. Archives come from
// anyone (a file a technician was handed, or whatever sits in a node's images dir), nodes may be
// hostile or broken, and the UI talks to the core over IPC/HTTP: each of these is read with a
// limit, and going over one is a clear error naming the limit (never a crash, never unbounded
// memory or work). docs/limits.md's table is rendered from LIMITS (a unit test keeps it so).
//
// The values are far above anything real (a real archive has tens of images, a few hundred tar
// members and under 200 layers per image) and low enough that the worst case fits a laptop.
import { HoldfastError } from './errors';

export interface LimitSpec {
  value: number;
  unit: 'bytes' | 'count' | 'levels' | 'ratio';
  /** What is bounded, for docs/limits.md and error messages. */
  what: string;
  /** Why this value, for docs/limits.md. */
  why: string;
}

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

export const LIMITS = {
  // ---- image archives (local inspect before upload, and every archive in a node's images dir) ----
  'archive.members': {
    value: 100_000,
    unit: 'count',
    what: 'tar members in one image archive',
    why: 'each member costs a little memory; real archives have hundreds',
  },
  'archive.memberNameBytes': {
    value: 4096,
    unit: 'bytes',
    what: 'length of one tar member name or link target',
    why: 'PATH_MAX on Linux: no file on a node can have a longer name',
  },
  'archive.memberNamesBytes': {
    value: 16 * MiB,
    unit: 'bytes',
    what: 'all member names of one archive together',
    why: 'names are kept until the archive is resolved',
  },
  'archive.jsonMemberBytes': {
    value: 4 * MiB,
    unit: 'bytes',
    what: 'one metadata member kept for parsing (manifest.json, index.json, configs, manifests)',
    why: 'real ones are a few KiB; larger ones are not read, and the archive is refused if it needs them',
  },
  'archive.metadataBytes': {
    value: 64 * MiB,
    unit: 'bytes',
    what: 'all metadata members kept for parsing together',
    why: 'bounds the memory one archive index costs',
  },
  'archive.references': {
    value: 10_000,
    unit: 'count',
    what: 'images (tags, index.json entries) one archive names',
    why: 'a real archive names tens; the image list is built and shown per reference',
  },
  'archive.layersPerImage': {
    value: 1_000,
    unit: 'count',
    what: 'layers of one image (per platform)',
    why: 'overlayfs stacks at most a few hundred; Docker refuses more than 127',
  },
  'archive.indexDepth': {
    value: 4,
    unit: 'levels',
    what: 'OCI image indexes nested inside an index.json entry',
    why: 'real archives nest one level (a multi-platform index)',
  },
  'archive.indexEntries': {
    value: 1_000,
    unit: 'count',
    what: 'entries of one nested OCI image index',
    why: 'a multi-platform index lists a handful of platforms',
  },
  'archive.expandedEntries': {
    value: 250_000,
    unit: 'count',
    what: 'platforms and layers over all images of one archive, after expanding shared manifests and nested indexes',
    why: 'bounds the size of the index itself: a small file must not describe billions of entries',
  },
  'archive.expansionRatio': {
    value: 1_000,
    unit: 'ratio',
    what: 'decompressed bytes per compressed byte, once more than archive.expansionGraceBytes were decompressed',
    why: 'real image archives compress 1–20×; a bomb expands 10,000× and more',
  },
  'archive.expansionGraceBytes': {
    value: 1 * GiB,
    unit: 'bytes',
    what: 'decompressed bytes read before archive.expansionRatio applies',
    why: 'small archives of mostly zeros stay readable',
  },
  'archive.zstdWindowBytes': {
    value: 32 * MiB,
    unit: 'bytes',
    what: 'zstd window a frame may declare (checked from its header, before any decoding)',
    why: "k3s's own limit (klauspost/compress WithDecoderMaxMemory(1 << 25)): k3s imports nothing from such an archive",
  },

  // ---- direct delivery's local spool ($HOLDFAST_HOME/spool) ----
  'direct.spoolFreeBytes': {
    value: 64 * MiB,
    unit: 'bytes',
    what: "free space the spool's disk keeps while `import --direct` spools an archive's blobs",
    why: 'a blob that would leave less is refused before it is written: an archive never fills the disk this machine works on',
  },

  'direct.heldBlobBytes': {
    value: 64 * MiB,
    unit: 'bytes',
    what: 'small blobs (64 KiB or less each) held in memory while `import --direct` reads an archive, so that only those an image uses are written',
    why: "an image's configs and manifests are a few KiB each; past it, small blobs are written to the spool at once",
  },

  // ---- signatures carried with images (#48) ----
  'signature.bytes': {
    value: 1 * MiB,
    unit: 'bytes',
    what: 'one signature file: a Sigstore bundle, a signature manifest, a simple-signing payload, a public key, a trusted root',
    why: 'real ones are a few KiB; a larger one is refused before it is read',
  },
  'signature.perImage': {
    value: 100,
    unit: 'count',
    what: 'signatures of one image read and checked (legacy signature layers, referrer bundles, detached bundles)',
    why: 'an image has one or a few; each costs a read and a signature check',
  },
  'signature.chain': {
    value: 10,
    unit: 'count',
    what: "certificates in one chain: a keyless bundle's, or a certificate or timestamp authority's in a trusted root",
    why: "Fulcio's chains are 2 or 3 deep; building a path costs a signature check per pair of certificates",
  },
  'signature.manifests': {
    value: 1_000,
    unit: 'count',
    what: 'manifests in one OCI layout read to find the signatures (referrers and `.sig` tags) of its images',
    why: 'a real layout has a few per image; each costs a read',
  },

  // ---- what a node sends back ----
  'remote.commandOutputBytes': {
    value: 1 * MiB,
    unit: 'bytes',
    what: 'stdout (and, separately, stderr) of one buffered command on a node (sha256sum, stat, df, probes)',
    why: 'each answers in a line; the command is killed when it prints more',
  },
  'remote.listingOutputBytes': {
    value: 64 * MiB,
    unit: 'bytes',
    what: 'output of `sudo -n find` listing the images dir',
    why: 'about 500,000 files; the command is killed when it prints more',
  },
  'remote.workloadsBytes': {
    value: 64 * MiB,
    unit: 'bytes',
    what: "kubectl's JSON answer listing a cluster's workloads (the images the site needs)",
    why: 'about 20,000 pods with their controllers; kubectl is killed when it prints more',
  },
  'remote.workloadsSeconds': {
    value: 30,
    unit: 'count',
    what: 'seconds kubectl on a server node may take to list the workloads',
    why: 'an API server under load answers in seconds; past this the node counts as having no source of needs',
  },
  'pinSet.bytes': {
    value: 1 * MiB,
    unit: 'bytes',
    what: 'a pin set file (`--pin-set`, YAML or JSON)',
    why: 'a reference a line: about 10,000 references, the most one pin set may name',
  },
  'signaturePolicy.bytes': {
    value: 1 * MiB,
    unit: 'bytes',
    what: "a signature policy file (`--policy`, or policy.yaml in Holdfast's home)",
    why: 'a site has tens of rules; the most a policy may hold (200 rules) fits many times over',
  },
  'remote.guardStateBytes': {
    value: 512 * 1024,
    unit: 'bytes',
    what: "a node's guard state record (/var/lib/holdfast/guard-state.json) read by inspect",
    why: 'guard writes at most 200 references per list and 20 short warnings, under 300 KiB; a larger file was not written by guard and counts as unreadable',
  },
  'needs.listBytes': {
    value: 1 * MiB,
    unit: 'bytes',
    what: "an operator's list of needed images (needed-images/*.txt)",
    why: 'one reference a line: about 10,000 references',
  },
  'remote.importCacheBytes': {
    value: 16 * MiB,
    unit: 'bytes',
    what: "k3s's .cache.json read from a node",
    why: 'one short line per file; larger counts as unreadable',
  },
  'remote.importCacheDepth': {
    value: 64,
    unit: 'levels',
    what: "nesting of objects and arrays in k3s's .cache.json",
    why: 'k3s writes 3 levels; checked before parsing (a few MiB of brackets would cost hundreds of MiB), deeper counts as unreadable',
  },
  'remote.prepullListBytes': {
    value: 1 * MiB,
    unit: 'bytes',
    what: 'one .txt pre-pull list read from a node',
    why: 'a real list is a few KiB; larger is reported, not read',
  },

  // ---- local configuration read on import ----
  'sshConfig.includeDepth': {
    value: 16,
    unit: 'levels',
    what: 'Include nesting in ~/.ssh/config',
    why: "OpenSSH's own limit (READCONF_MAX_DEPTH)",
  },
  'sshConfig.files': {
    value: 256,
    unit: 'count',
    what: 'files read for one ~/.ssh/config, Includes and glob matches counted',
    why: 'an Include glob must not walk a whole file system',
  },
  'sshConfig.fileBytes': {
    value: 4 * MiB,
    unit: 'bytes',
    what: 'one ssh config file',
    why: 'real ones are a few KiB',
  },

  // ---- the local audit log ($HOLDFAST_HOME/audit.jsonl, read line by line) ----
  'audit.lineBytes': {
    value: 16 * MiB,
    unit: 'bytes',
    what: 'one line (one recorded change) of the local audit log',
    why: 'the largest real entry (10,000 references pinned at once) is a few MiB; a longer line was not written by Holdfast, and the log counts as unreadable',
  },
  'audit.freeBytes': {
    value: 1 * MiB,
    unit: 'bytes',
    what: "free space the audit log's disk must have before Holdfast changes a node",
    why: 'an entry is a few KiB; with less the disk counts as full and nothing is changed, since the change could not be recorded',
  },
  'audit.listBytes': {
    value: 4 * MiB,
    unit: 'bytes',
    what: "the newest audit entries the log shows (CLI and app), measured as their lines in the file",
    why: 'about 12,000 changes: a log of years is read line by line and only its newest entries are kept; the output says how many older ones it leaves out',
  },

  // ---- the UI boundary (holdfast serve, Electron IPC) ----
  'http.bodyBytes': {
    value: 1 * MiB,
    unit: 'bytes',
    what: "request body of one API call to Holdfast's server (the serve command)",
    why: 'the largest real request (10,000 references to pin) is well under it',
  },
  'ipc.payloadBytes': {
    value: 1 * MiB,
    unit: 'bytes',
    what: 'arguments of one IPC or API call, measured as JSON',
    why: 'the same bound as an HTTP body, for the desktop app',
  },
  'ipc.payloadDepth': {
    value: 32,
    unit: 'levels',
    what: 'nesting of objects and arrays in the arguments of one call',
    why: 'no channel takes more than 4 levels',
  },
} as const satisfies Record<string, LimitSpec>;

export type LimitName = keyof typeof LIMITS;

export const limit = (name: LimitName): number => LIMITS[name].value;

/** `4 MiB`, `100,000`, `1,000:1`: a limit's value as messages and docs/limits.md show it. */
export function formatLimit(name: LimitName): string {
  const { value, unit } = LIMITS[name];
  if (unit === 'bytes') {
    if (value >= GiB && value % GiB === 0) return `${value / GiB} GiB`;
    if (value >= MiB && value % MiB === 0) return `${value / MiB} MiB`;
    if (value >= 1024 && value % 1024 === 0) return `${value / 1024} KiB`;
    return `${value.toLocaleString('en-US')} bytes`;
  }
  if (unit === 'ratio') return `${value.toLocaleString('en-US')}:1`;
  return value.toLocaleString('en-US');
}

/** "the limit archive.references (10,000)": how every message names a limit. */
export const nameLimit = (name: LimitName): string => `the limit ${name} (${formatLimit(name)})`;

/** A HoldfastError for a limit gone over; `message` says what was found, this adds which limit. */
export function limitError(name: LimitName, message: string, code: 'INVALID_INPUT' | 'REFUSED' = 'REFUSED', hint?: string): HoldfastError {
  return new HoldfastError(code, `${message.replace(/\.$/, '')}: over ${nameLimit(name)}.`, hint ? { hint } : {});
}

/** docs/limits.md's table (Markdown), rendered from LIMITS. */
export function renderLimitsTable(): string {
  const rows = (Object.keys(LIMITS) as LimitName[]).map((n) => `| \`${n}\` | ${formatLimit(n)} | ${LIMITS[n].what} | ${LIMITS[n].why} |`);
  return ['| limit | value | what it bounds | why this value |', '|---|---|---|---|', ...rows].join('\n');
}
