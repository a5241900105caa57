// What is wrong with the images dir's own path, when listing it found nothing: a dangling
// symlink, a symlink loop, or a link to a file read as "missing" through SFTP and find, so the
// dir looked empty and uploads blamed write access. A missing dir is fine (k3s creates it).
import { HoldfastError } from '../errors';
import type { FileAccess } from './types';

/** The problem with `root` in a clause after its path, or null (a folder, or not there at all). */
export async function imagesDirProblem(files: Pick<FileAccess, 'stat'>, root: string): Promise<string | null> {
  const base = root.replace(/\/+$/, '') || '/';
  const own = await files.stat(base, { lstat: true }).catch(() => null);
  if (!own || own.type === 'dir') return null;
  if (own.type !== 'symlink') return `is a ${own.type === 'file' ? 'file' : 'special file'}, not a folder`;
  const target = await files.stat(base).catch(() => null);
  if (!target) return 'is a symlink that leads nowhere (its target is missing, or the links loop)';
  if (target.type === 'dir') return null;
  return `is a symlink to a ${target.type === 'file' ? 'file' : 'special file'}, not to a folder`;
}

/** Throws when the images dir's path is broken (see imagesDirProblem). */
export async function assertImagesDirPath(files: Pick<FileAccess, 'stat'>, root: string, node?: string): Promise<void> {
  const problem = await imagesDirProblem(files, root);
  if (!problem) return;
  throw new HoldfastError('INVALID_INPUT', `The images dir ${root}${node ? ` on ${node}` : ''} ${problem}.`, {
    hint: `k3s reads archives from that folder: look at it on the node (ls -ld ${root}) and make it a folder or a link to one, or point Holdfast at the right one with node edit --images-dir.`,
  });
}
