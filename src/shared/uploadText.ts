// What a cancelled upload says once bytes were on their way, worded once for the upload itself
// (core/usecases/upload) and the CLI's fallback when a job ended without its words: how much the
// node keeps, of how much, in sizes people read (./format formatBytes), never a raw byte offset.
import { formatBytes } from './format';

export function cancelledWhileSending(relPath: string, node: string, kept: number, size: number): string {
  return `The upload of ${relPath} to ${node} was cancelled after ${formatBytes(kept)} of ${formatBytes(size)}; the partial file is kept, run it again to resume.`;
}
