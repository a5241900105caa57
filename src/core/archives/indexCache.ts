// Local cache of archive indexes. On its own so that what only needs the cache (the CLI's
// context) does not load the archive readers.
//
// A failed read is cached too (issue #11): an archive that is corrupt, or over a limit, is so
// until it changes, and a planted file must cost one read, not one per images list. Only verdicts
// on the content are cached (scan.ts decides): a dropped connection is not.
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../config/atomic';
import type { ArchiveIndex } from './format/readIndex';

/** What reading an archive gave: its index, or why it could not be read. */
export type CachedScan = { index: ArchiveIndex } | { error: string };

/** Cache entries written since failures and version keys are cached (older files are ignored). */
const FORMAT = 2;

/** Local cache of archive indexes, keyed by what identifies an unchanged archive. */
export class IndexCache {
  constructor(private readonly dir: string) {}

  private file(key: string): string {
    return path.join(this.dir, createHash('sha256').update(`v${FORMAT}\0${key}`).digest('hex') + '.json');
  }

  async get(key: string): Promise<CachedScan | null> {
    try {
      const v = JSON.parse(await fs.readFile(this.file(key), 'utf8')) as { v?: unknown; index?: { images?: unknown }; error?: unknown };
      if (v.v !== FORMAT) return null;
      if (typeof v.error === 'string') return { error: v.error };
      if (v.index && typeof v.index === 'object' && Array.isArray(v.index.images)) return { index: v.index as ArchiveIndex };
      return null;
    } catch {
      return null;
    }
  }

  async set(key: string, entry: CachedScan): Promise<void> {
    await writeFileAtomic(this.file(key), JSON.stringify({ v: FORMAT, ...entry }));
  }
}
