// readLocalArchive looks inside a local archive before any byte leaves the laptop: format, compression, the
// images and platforms it holds, and its SHA-256 — all in one streaming pass. Anything k3s
// would choke on (corrupt, truncated, not an image archive, unsupported compression, unsafe
// member paths, missing blobs, a zstd window over k3s's 32 MiB) is refused here with a reason.
// The CLI's upload and import and the app's import wizard all come through here.
import { createHash } from 'node:crypto';
import { constants as fsConstants, createReadStream, promises as fs } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import type { LocalArchive } from '../../../shared/domain/archives';
import { classifyImagesDirPath, ARCHIVE_SUFFIXES } from '../../../shared/archiveSuffixes';
import { UNDETECTED_DISTRO_NAME } from '../../../shared/distro';
import { importWarnings } from '../../archives/importWarnings';
import { ArchiveError, readArchiveIndex, type ArchiveIndex, type ReadArchiveIndexOptions } from '../../archives/format/readIndex';
import { zstdRecompressHint } from '../../archives/format/zstdFrames';
import { HoldfastError } from '../../errors';
import { shellWord } from '../../../shared/shellQuote';

/**
 * A file that ends early was usually copied only in part; and `ctr images export` through
 * containerd's transfer service (the default from 1.7 on) can write a short file and still exit 0
 * (seen on a containerd 2.1.9 lab node under load: 3 short exports in 70; with --local, none in 40).
 */
const TRUNCATED_HINT =
  'The file ends early: copy it again, or rebuild it (docker save / skopeo copy). Made with `ctr images export` on containerd 1.7 or later? Export it again with --local: the export through containerd\'s transfer service can write a short file and still report success.';

/** Text or another kind of file under an archive's name: usually the wrong file, or a download that saved an error page. */
const NOT_AN_ARCHIVE_HINT =
  'Check that this is the file you meant (a failed download can leave an error page under the archive\'s name); an image archive comes from docker save, skopeo copy or ctr images export.';

export interface InspectedArchive extends LocalArchive {
  index: ArchiveIndex;
}

export interface ReadArchiveOptions {
  signal?: AbortSignal;
  /** The bytes of the file read so far, after each chunk of the one pass (for a progress line). */
  onRead?: (bytesRead: number, size: number) => void;
  /** Receives members as they stream past in the same pass (the signatures an OCI layout carries). */
  memberSink?: ReadArchiveIndexOptions['memberSink'];
}

/**
 * The one verdict on an archive that fails its checks, whichever way it is delivered (upload,
 * import, import --direct): REFUSED (exit 3), naming the file and the fault, with what to do.
 * Anything that is not an ArchiveError is returned as it is.
 */
export function archiveRefusal(file: string, e: unknown): unknown {
  if (!(e instanceof ArchiveError)) return e;
  const name = path.basename(file);
  const fix = e.refusal
    ? zstdRecompressHint(name, shellWord)
    : e.reason === 'truncated'
      ? TRUNCATED_HINT
      : e.reason === 'not-an-image-archive'
        ? NOT_AN_ARCHIVE_HINT
        : 'Rebuild the archive (docker save / skopeo copy) and try again.';
  return new HoldfastError('REFUSED', `${name} was refused: ${e.message}`, { hint: `Nothing was sent. ${fix}`, cause: e });
}

export async function readLocalArchive(file: string, opts: ReadArchiveOptions = {}): Promise<InspectedArchive> {
  const abs = path.resolve(file);
  let st;
  try {
    st = await fs.stat(abs);
  } catch {
    throw new HoldfastError('NOT_FOUND', `no such file: ${abs}`);
  }
  if (!st.isFile()) throw new HoldfastError('INVALID_INPUT', `${abs} is not a regular file`);
  // Readable, asked before anything is read: a refusal now, not a stream error midway.
  await fs.access(abs, fsConstants.R_OK).catch((err: unknown) => {
    throw new HoldfastError('INVALID_INPUT', `cannot read ${abs}: ${(err as NodeJS.ErrnoException).code === 'EACCES' ? 'permission denied' : (err as Error).message}`, {
      hint: 'Give the user running Holdfast read access to the file, or copy it somewhere that user can read.',
      cause: err,
    });
  });
  const kind = classifyImagesDirPath(abs);
  if (kind.kind !== 'archive') {
    throw new HoldfastError('REFUSED', `${path.basename(abs)} does not end in a suffix ${UNDETECTED_DISTRO_NAME} imports (${ARCHIVE_SUFFIXES.join(' ')}; case-sensitive)`, {
      hint: 'Recompress it with a supported compression, or rename it if it already is one.',
    });
  }
  const hash = createHash('sha256');
  const tee = new PassThrough({ highWaterMark: 1 << 20 });
  const src = createReadStream(abs, { highWaterMark: 1 << 20 });
  let read = 0;
  src.on('data', (c) => {
    hash.update(c as Buffer);
    read += (c as Buffer).length;
    opts.onRead?.(read, st.size);
  });
  src.on('error', (e) => tee.destroy(e));
  src.pipe(tee);
  let index: ArchiveIndex;
  try {
    index = await readArchiveIndex(tee, { compression: kind.compression, verifyBlobs: true, ...(opts.signal ? { signal: opts.signal } : {}), ...(opts.memberSink ? { memberSink: opts.memberSink } : {}) });
    // The index may be complete before the last bytes were read (trailing padding): finish the hash.
    if (!src.readableEnded) await new Promise<void>((resolve, reject) => {
      src.on('end', resolve);
      src.on('error', reject);
      tee.resume();
    });
  } catch (e) {
    src.destroy();
    throw archiveRefusal(abs, e);
  }
  // readArchiveIndex rejects what k3s cannot import unless told to describe it; never send one.
  if (index.format === null) throw new HoldfastError('INTERNAL', `${path.basename(abs)}: the archive index was not read`);
  const images = index.images.map((i) => {
    const complete = i.platforms.filter((p) => p.missing.length === 0);
    return {
      name: i.name,
      platforms: complete.map((p) => p.platform),
      configDigest: complete[0]?.configDigest ?? null,
      configDigests: complete.map((p) => p.configDigest).filter((d) => d !== ''),
    };
  });
  if (images.length === 0) throw new HoldfastError('REFUSED', `${path.basename(abs)} holds no images`);
  return {
    path: abs,
    size: st.size,
    sha256: hash.digest('hex'),
    format: index.format,
    compression: kind.compression,
    images,
    uncompressedBytes: index.uncompressedBytes,
    warnings: importWarnings(index),
    index,
  };
}
