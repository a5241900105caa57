// `.txt` files in the images dir: lists of image references k3s pre-pulls through CRI at start —
// and pins, like imported archives. Parsed as k3s's prePullImages reads them
// (pkg/agent/containerd/containerd.go): bufio.Scanner lines, each trimmed; blank lines skipped;
// a line that is not an image reference (a `# comment`, prose) is logged and skipped; a line
// longer than bufio's 64 KiB token limit makes the whole file fail (k3s's own unit test,
// prepull_test.go "line too long"), and then nothing from it is pinned.
import { limit } from '../limits';
import { normalizeReference, ReferenceError } from '../../shared/imageReference';
import type { PrepullList } from '../../shared/domain/archives';

/** k3s reads the whole file; Holdfast reads at most this much (limits.ts remote.prepullListBytes). */
export const PREPULL_MAX_BYTES = limit('remote.prepullListBytes');

/** bufio.MaxScanTokenSize: a line must be shorter than this, newline excluded. */
export const K3S_MAX_LINE_BYTES = 64 * 1024;


export function parsePrepullList(text: string): PrepullList {
  const names: string[] = [];
  const skipped: string[] = [];
  // ScanLines splits on \n and drops one trailing \r; a last line without \n still counts.
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  for (const raw of lines) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (Buffer.byteLength(line, 'utf8') >= K3S_MAX_LINE_BYTES) {
      return { error: `a line is longer than ${K3S_MAX_LINE_BYTES - 1} bytes, so k3s fails on the whole file` };
    }
    const name = line.trim();
    if (name === '') continue;
    // Go's TrimSpace keeps a byte-order mark (JS's trim drops it): such a line is no reference to k3s.
    if (line.includes('\uFEFF')) {
      skipped.push(name);
      continue;
    }
    try {
      const n = normalizeReference(name);
      if (!names.includes(n)) names.push(n);
    } catch (e) {
      if (!(e instanceof ReferenceError)) throw e;
      skipped.push(name);
    }
  }
  return { names, skipped };
}
