// An SFTP channel whose requests settle even after it is gone.
//
// ssh2 registers a request's callback and then writes it only if the channel is open; a request
// made after the channel ended (the link dropped, the node's sftp-server died) is never sent and
// never answered. ssh2 fails the requests pending when the channel ends ("No response from
// server"), not the ones made afterwards: an upload holding its channel would wait forever, the
// event loop would empty, and Node would exit 0 with nothing done (issue #51). So once the
// channel has ended, every request fails at once with the error `gone` makes.
import type { SFTPWrapper } from 'ssh2';

/** SFTPWrapper's request methods: each takes its callback last. */
const REQUESTS = new Set([
  'open', 'close', 'read', 'write', 'fstat', 'fsetstat', 'futimes', 'fchown', 'fchmod',
  'opendir', 'readdir', 'unlink', 'rename', 'mkdir', 'rmdir', 'stat', 'lstat', 'setstat',
  'utimes', 'chown', 'chmod', 'readlink', 'symlink', 'realpath', 'readFile', 'writeFile',
  'appendFile', 'exists', 'fastGet', 'fastPut',
  'ext_openssh_rename', 'ext_openssh_statvfs', 'ext_openssh_fstatvfs', 'ext_openssh_hardlink',
  'ext_openssh_fsync', 'ext_openssh_lsetstat', 'ext_openssh_expandPath', 'ext_copy_data',
  'ext_home_dir', 'ext_users_groups',
]);

/** ssh2's error for the requests pending when a channel ends. */
export function isChannelEndError(err: unknown): boolean {
  return err instanceof Error && err.message === 'No response from server';
}

/** `sftp`, with every request made once it has ended failing at once (on the next tick) with gone(). */
export function settlingSftp(sftp: SFTPWrapper, gone: () => Error): SFTPWrapper {
  let ended = false;
  // 'end': the server sends nothing more, so nothing asked from then on can be answered.
  sftp.once('end', () => (ended = true));
  sftp.once('close', () => (ended = true));
  // Per function, not per name: a method replaced on the channel is wrapped anew.
  const wrapped = new WeakMap<object, unknown>();
  return new Proxy(sftp, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      let fn = wrapped.get(method);
      if (!fn) {
        fn =
          typeof prop === 'string' && REQUESTS.has(prop)
            ? (...args: unknown[]) => {
                if (!ended) return method.apply(target, args);
                const cb = args[args.length - 1];
                if (typeof cb === 'function') process.nextTick(cb as (err: Error) => void, gone());
                return undefined;
              }
            : method.bind(target);
        wrapped.set(method, fn);
      }
      return fn;
    },
  });
}
