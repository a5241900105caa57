// What a login may not do in a node's images dir, worded once for every path that meets it: the
// upload/import checks before a byte is sent (write) and every listing of the images dir —
// archives, images' archive lookup, inspect, prune's checks (read). A root-only (0700) images dir
// and a non-root login without sudo otherwise surfaced as a bare "Permission denied".
import { HoldfastError } from '../errors';

/** SSH_FX_PERMISSION_DENIED, as ssh2 reports an SFTP refusal for want of permission. */
const SFTP_PERMISSION_DENIED = 3;

/** An SFTP refusal for want of permission — or one of the refusals below, which carry it as cause. */
export function isPermissionDenied(e: unknown): boolean {
  if (!e || typeof e !== 'object') return false;
  if ((e as { code?: unknown }).code === SFTP_PERMISSION_DENIED || /permission denied/i.test(String((e as { message?: unknown }).message))) return true;
  return e instanceof HoldfastError && e.code === 'REFUSED' && isPermissionDenied(e.cause);
}

/** The refusal: who may not write where, that nothing was sent, and the two ways out. */
export function mayNotWriteError(o: { user: string; node: string; folder: string; imagesDir: string }): HoldfastError {
  const base = o.imagesDir.replace(/\/+$/, '') || '/';
  const where = o.folder === base ? `the images dir ${o.folder}` : o.folder.startsWith(`${base}/`) ? `${o.folder} in the images dir` : `${o.folder}, where the images dir ${base} would be created`;
  return new HoldfastError('REFUSED', `${o.user} may not write in ${where} on ${o.node}: nothing was sent`, {
    hint:
      o.user === 'root'
        ? 'The file system holding it is read-only (or the folder is immutable) on the node: check its mounts, then run the upload again.'
        : `Reach the images dir through sudo (the node's sudo option, --sudo on the command line; the user needs password-less sudo), or connect as a user who may write there, such as root.`,
  });
}

/** The refusal to list the images dir (or a folder in it): who may not read what, and the ways out. */
export function mayNotReadError(o: { user: string; node: string; folder: string; imagesDir: string; cause?: unknown }): HoldfastError {
  const base = o.imagesDir.replace(/\/+$/, '') || '/';
  const what = o.folder === base ? `the images dir ${o.folder}` : `${o.folder} in the images dir`;
  return new HoldfastError('REFUSED', `${o.user} may not read ${what} on ${o.node}`, {
    hint:
      o.user === 'root'
        ? 'Something other than its mode refuses root there (an SELinux or AppArmor policy, a FUSE or network mount): check the folder on the node, then run the command again.'
        : "Reach the images dir through sudo (the node's sudo option; the user needs password-less sudo), or connect as a user who may read it, such as root.",
    ...(o.user === 'root' ? {} : { remedy: { action: 'sudo' as const, node: o.node, toRead: true as const } }),
    cause: o.cause,
  });
}
