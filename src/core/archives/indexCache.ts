// Local cache of archive indexes. On its own so that what only needs the cache (the CLI's
// context) does not load the archive readers.
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../config/atomic';
import type { ArchiveIndex } from './format/readIndex';

/** Local cache of archive indexes, keyed by what identifies an unchanged archive. */
export class IndexCache {
  constructor(private readonly dir: string) {}

  private file(key: string): string {
    return path.join(this.dir, createHash('sha256').update(key).digest('hex') + '.json');
  }

  async get(key: string): Promise<ArchiveIndex | null> {
    try {
      return JSON.parse(await fs.readFile(this.file(key), 'utf8')) as ArchiveIndex;
    } catch {
      return null;
    }
  }

  async set(key: string, index: ArchiveIndex): Promise<void> {
    await writeFileAtomic(this.file(key), JSON.stringify(index));
  }
}
