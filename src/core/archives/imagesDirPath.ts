// A file in a node's images dir named the way a technician copies it from a shell on the node:
// `/var/lib/rancher/k3s/agent/images/app.tar` means the same file as `app.tar`. The operations
// take paths relative to the images dir (as `holdfast archives` lists them); this turns an
// absolute one inside the dir into that form, and refuses one outside it naming the dir.
import path from 'node:path';
import { HoldfastError } from '../errors';

/** `p` relative to `imagesDir` when `p` is absolute; a relative `p` is returned as given. */
export function inImagesDir(imagesDir: string, p: string, node: string): string {
  if (!p.startsWith('/')) return p;
  const root = path.posix.normalize(imagesDir).replace(/\/+$/, '') || '/';
  const abs = path.posix.normalize(p);
  const rel = path.posix.relative(root, abs);
  if (rel !== '' && !rel.startsWith('../') && rel !== '..' && !path.posix.isAbsolute(rel)) return rel;
  throw new HoldfastError('INVALID_INPUT', `${p} is not in the images dir of ${node} (${root})`, {
    hint: `Give a path inside ${root}, absolute or relative to it, as the images dir's listing shows it.`,
    remedy: { action: 'archives', node, inside: root },
  });
}
