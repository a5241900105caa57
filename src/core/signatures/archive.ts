// The signatures inside an image archive (a tar of an OCI layout, compressed or not; a Zarf
// package's layout under images/): the small JSON members a signature check reads are kept as the
// archive streams past once, through readArchiveIndex's member sink, so the import's one read can
// carry them too. Large members and anything not JSON are never kept; what is kept is bounded by
// archive.metadataBytes.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { classifyImagesDirPath } from '../../shared/archiveSuffixes';
import { readArchiveIndex, type ArchiveIndex, type MemberSink } from '../archives/format/readIndex';
import { HoldfastError } from '../errors';
import { limit, limitError } from '../limits';
import { SignatureLayout, type LayoutFiles } from './layout';

const KEPT = /^(?:\.\/)?(index\.json|blobs\/sha256\/[0-9a-f]{64})$/;

/** Collects an archive's index.json and its small JSON blobs while readArchiveIndex reads it. */
export class SignatureMembers {
  private readonly kept = new Map<string, Buffer>();
  private keptBytes = 0;

  /** `roots`: the directories a layout may sit in, as readArchiveIndex's option of that name. */
  constructor(
    private readonly name: string,
    private readonly roots: readonly string[] = [''],
  ) {}

  /** For ReadArchiveIndexOptions.memberSink. */
  readonly sink = (member: { path: string; size: number }): MemberSink | null => {
    const kept = this.roots.some((r) => (r === '' ? KEPT.test(member.path) : member.path.startsWith(r + '/') && KEPT.test(member.path.slice(r.length + 1))));
    if (!kept || member.size > limit('signature.bytes')) return null;
    const key = member.path.replace(/^\.\//, '');
    const chunks: Buffer[] = [];
    let json: boolean | null = null;
    return {
      write: (c) => {
        json ??= firstByteIsBrace(c);
        if (json !== false) chunks.push(c);
      },
      // async: a limit gone over rejects the read instead of throwing inside the tar stream
      end: async () => {
        if (json !== true) return;
        this.keptBytes += member.size;
        if (this.keptBytes > limit('archive.metadataBytes')) throw limitError('archive.metadataBytes', `${this.name}: signature metadata is too large`);
        this.kept.set(key, Buffer.concat(chunks));
      },
    };
  };

  /** The layout those members make in `root` (one of the roots); refused when it has no index.json. */
  layout(root = ''): Promise<SignatureLayout> {
    const files: LayoutFiles = {
      name: this.name,
      read: async (p, what) => {
        const data = this.kept.get(root ? `${root}/${p}` : p);
        if (!data) throw new HoldfastError('NOT_FOUND', `${this.name}: ${what} is not in the archive (${p}, as JSON of at most ${limit('signature.bytes').toLocaleString('en-US')} bytes).`);
        return data;
      },
    };
    return SignatureLayout.open(files);
  }
}

/** null until a byte other than whitespace is seen. */
function firstByteIsBrace(c: Buffer): boolean | null {
  for (const b of c) if (b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09) return b === 0x7b;
  return null;
}

/** Reads an OCI-layout archive once: what it holds, and the signatures it carries. */
export async function readArchiveSignatures(file: string): Promise<{ index: ArchiveIndex; layout: SignatureLayout }> {
  const kind = classifyImagesDirPath(path.resolve(file));
  if (kind.kind !== 'archive') throw new HoldfastError('INVALID_INPUT', `${path.basename(file)}: not an image archive by its name.`);
  const members = new SignatureMembers(path.basename(file));
  const index = await readArchiveIndex(createReadStream(file), { compression: kind.compression, verifyBlobs: true, memberSink: members.sink });
  if (index.format !== 'oci') throw new HoldfastError('INVALID_INPUT', `${path.basename(file)}: a ${index.format ?? 'unknown'} archive carries no signatures; an OCI layout does.`);
  return { index, layout: await members.layout() };
}

/** A layout the technician carries: a directory, or an archive of one (read once, for its signatures). */
export async function openSignatureLayout(p: string): Promise<SignatureLayout> {
  const st = await stat(p).catch(() => null);
  if (!st) throw new HoldfastError('NOT_FOUND', `${p}: no such file or directory`, { hint: 'Give an OCI layout directory, or an archive of one, that holds the signatures.' });
  return st.isDirectory() ? SignatureLayout.open(p) : (await readArchiveSignatures(p)).layout;
}
