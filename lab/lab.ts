// A lab: N simulated k3s nodes sharing one client key, one authorized_keys and one known_hosts.
import { access, chmod, mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { constants } from 'node:fs';
import { join } from 'node:path';
import { run } from './exec.ts';
import { containerdBinaries, defaultContainerdLine, type ContainerdLine, type LabDistro } from './containerd.ts';
import { LabNode, REQUIRED_BINARIES, SFTP_SERVER, SSHD, type LabNodeHandle } from './node.ts';

export interface Lab {
  /** Lab root (short, e.g. /tmp/hflab-XXXXXX). */
  dir: string;
  nodes: LabNodeHandle[];
  /** Path of the client private key (ed25519, no passphrase), authorized on every node. */
  clientKey: string;
  /** Path of the known_hosts file listing every node ('[127.0.0.1]:PORT ssh-ed25519 AAAA…'). */
  knownHosts: string;
  node(name: string): LabNodeHandle;
  /** Rewrites known_hosts from the nodes' current host keys (e.g. after rotateHostKey). */
  refreshKnownHosts(): Promise<void>;
  /** The local users created for this lab (see StartLabOptions.users). */
  users: LabUser[];
  stop(): Promise<void>;
}

export interface LabUserSpec {
  /** Login name: [a-z_][a-z0-9_-]{0,30}; must not exist on the host yet (or be a previous lab's). */
  name: string;
  /** 'nopasswd': `NAME ALL=(root) NOPASSWD: ALL` in /etc/sudoers.d. */
  sudo?: 'nopasswd';
  /** Login password (for password / keyboard-interactive tests); default none (key only). */
  password?: string;
}

export interface LabUser {
  name: string;
  uid: number;
  home: string;
}

export interface StartLabOptions {
  /** A count (names n1..nN) or explicit names. */
  nodes: number | string[];
  /**
   * Lab root; default a fresh /tmp/hflab-XXXXXX, removed by stop() unless HOLDFAST_LAB_KEEP=1.
   * A given dir is kept. Keep it short (socket paths < 100 chars).
   */
  dir?: string;
  /**
   * Local (non-root) users to create on the host — the nodes share its /etc, so every node knows
   * them; they log in with the lab's client key. When given, the lab dir becomes 0711 and the
   * authorized_keys file 0644 (sshd reads it as the user), and every node's images dir is made
   * root-only (0700), so a user reaches it only through sudo. Removed again by stop().
   */
  users?: LabUserSpec[];
  /**
   * The containerd line every node runs: '2' (default, or $HOLDFAST_LAB_CONTAINERD), '1.7' or
   * '1.6' (see lab/containerd.ts). A test that is about one line names it.
   */
  containerd?: ContainerdLine;
  /**
   * The distro every node is shaped as: 'k3s' (default, or $HOLDFAST_LAB_DISTRO) or 'rke2' (see
   * lab/containerd.ts). A test that is about one distro names it.
   */
  distro?: LabDistro;
}

const LAB_USER_MARK = 'holdfast-lab';

/**
 * A lab user's name on this host: the test's own name and this process's id. Users are host-wide
 * (/etc/passwd), so two runs of the suite on one machine at once (a developer's and CI's) would
 * otherwise replace each other's users mid-test (seen: a password login refused because the other
 * run had just made the same user anew).
 */
export function labUserName(base: string): string {
  return `${base}${process.pid}`;
}

/** The pid recorded in a lab user's GECOS comment (`<LAB_USER_MARK> pid=N`), if any. */
function ownerPid(gecos: string | undefined): number | null {
  const m = new RegExp(`^${LAB_USER_MARK} pid=(\\d+)$`).exec(gecos ?? '');
  return m ? Number(m[1]) : null;
}

/** Whether process `pid` still runs (EPERM: it does, as another user's). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes the lab users of runs that are gone (a crash, a kill -9): each names its process. */
async function removeOrphanUsers(): Promise<void> {
  const passwd = await run(['getent', 'passwd']).catch(() => '');
  for (const line of passwd.split('\n')) {
    const [name, , , , gecos] = line.split(':');
    const pid = ownerPid(gecos);
    if (name && pid !== null && pid !== process.pid && !alive(pid)) await removeUser(name);
  }
}

async function createUser(spec: LabUserSpec): Promise<LabUser> {
  if (!/^[a-z_][a-z0-9_-]{0,30}$/.test(spec.name)) throw new Error(`startLab: bad user name ${spec.name}`);
  const home = `/home/${spec.name}`;
  // A user left by a crashed lab (marked by its GECOS comment) is replaced; any other is refused,
  // and so is one of a lab still running.
  const existing = await run(['getent', 'passwd', spec.name]).catch(() => '');
  if (existing) {
    const gecos = existing.split(':')[4];
    const pid = ownerPid(gecos);
    if (!gecos?.startsWith(LAB_USER_MARK) || (pid !== null && pid !== process.pid && alive(pid))) throw new Error(`startLab: user ${spec.name} already exists on this host`);
    await removeUser(spec.name);
  }
  await mkdir('/home', { recursive: true });
  await run(['useradd', '--create-home', '--home-dir', home, '--shell', '/bin/sh', '--comment', `${LAB_USER_MARK} pid=${process.pid}`, spec.name]);
  // '*' = no valid password but not locked ('!'): sshd without PAM refuses locked accounts even for keys.
  if (spec.password !== undefined) await run(['chpasswd'], { input: `${spec.name}:${spec.password}\n` });
  else await run(['usermod', '--password', '*', spec.name]);
  if (spec.sudo === 'nopasswd') {
    const file = `/etc/sudoers.d/${sudoersName(spec.name)}`;
    await writeFile(file, `${spec.name} ALL=(root) NOPASSWD: ALL\n`, { mode: 0o440 });
    await run(['visudo', '-c', '-q', '-f', file]);
  }
  const uid = Number((await run(['id', '-u', spec.name])).trim());
  return { name: spec.name, uid, home };
}

function sudoersName(user: string): string {
  return `holdfast-lab-${user.replace(/[^a-z0-9_-]/g, '_')}`;
}

async function removeUser(name: string): Promise<void> {
  await rm(`/etc/sudoers.d/${sudoersName(name)}`, { force: true });
  // -f: even while a lab session of the user is still ending
  await run(['userdel', '--force', '--remove', name]).catch(() => undefined);
}

async function which(bin: string): Promise<boolean> {
  if (bin.startsWith('/')) {
    try {
      await access(bin, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  }
  for (const d of (process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin').split(':')) {
    try {
      await access(join(d, bin), constants.X_OK);
      return true;
    } catch {
      /* next */
    }
  }
  return false;
}

/** Throws one clear line when the lab cannot run here (not root, a binary missing). */
export async function checkLabPrerequisites(line: ContainerdLine = defaultContainerdLine()): Promise<void> {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    throw new Error('the lab needs root (it creates mount namespaces and runs containerd and sshd)');
  }
  const missing: string[] = [];
  for (const b of [...REQUIRED_BINARIES, SSHD, SFTP_SERVER]) if (!(await which(b))) missing.push(b);
  if (missing.length) {
    throw new Error(
      `the lab needs these binaries: ${missing.join(', ')} (Debian packages: containerd, openssh-server, openssh-client, util-linux)`,
    );
  }
  containerdBinaries(line); // throws naming scripts/lab-containerd.sh when the line is not fetched
}

export async function startLab(opts: StartLabOptions): Promise<Lab> {
  const line = opts.containerd ?? defaultContainerdLine();
  await checkLabPrerequisites(line);
  const names =
    typeof opts.nodes === 'number' ? Array.from({ length: opts.nodes }, (_, i) => `n${i + 1}`) : [...opts.nodes];
  if (new Set(names).size !== names.length) throw new Error('startLab: duplicate node names');
  for (const n of names) if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$/.test(n)) throw new Error(`startLab: bad node name ${n}`);

  let dir: string;
  const ownDir = !opts.dir;
  if (opts.dir) {
    dir = opts.dir;
    await mkdir(dir, { recursive: true });
  } else {
    dir = await mkdtemp('/tmp/hflab-');
  }
  const clientKey = join(dir, 'id_ed25519');
  const authorizedKeys = join(dir, 'authorized_keys');
  const knownHosts = join(dir, 'known_hosts');
  await rm(clientKey, { force: true });
  await rm(clientKey + '.pub', { force: true });
  await run(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', 'holdfast-lab-client', '-f', clientKey]);
  await writeFile(authorizedKeys, await readFile(clientKey + '.pub'));

  const nodes: LabNode[] = [];
  const users: LabUser[] = [];
  const stopAll = async (): Promise<void> => {
    await Promise.all(nodes.map((n) => n.stop()));
    for (const u of users.splice(0)) await removeUser(u.name);
    // a lab dir we created ourselves is removed (HOLDFAST_LAB_KEEP=1 keeps it for post-mortems)
    if (ownDir && process.env.HOLDFAST_LAB_KEEP !== '1') await rm(dir, { recursive: true, force: true });
  };
  try {
    const started = await Promise.allSettled(
      names.map((name) => LabNode.start({ name, root: join(dir, name), authorizedKeysFile: authorizedKeys, containerd: line, distro: opts.distro })),
    );
    for (const s of started) if (s.status === 'fulfilled') nodes.push(s.value);
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    if (opts.users?.length) {
      await chmod(dir, 0o711);
      await chmod(authorizedKeys, 0o644);
      await removeOrphanUsers();
      for (const spec of opts.users) users.push(await createUser(spec));
      for (const n of nodes) await n.restrictImagesDir();
    }
  } catch (e) {
    await stopAll();
    throw e;
  }

  const refreshKnownHosts = async (): Promise<void> => {
    await writeFile(knownHosts, nodes.map((n) => n.knownHostsLine).join('\n') + '\n');
  };
  await refreshKnownHosts();

  let stopping: Promise<void> | undefined;
  return {
    dir,
    nodes,
    clientKey,
    knownHosts,
    node(name: string): LabNodeHandle {
      const n = nodes.find((x) => x.name === name);
      if (!n) throw new Error(`no lab node named ${name}`);
      return n;
    },
    refreshKnownHosts,
    users,
    stop(): Promise<void> {
      stopping ??= stopAll();
      return stopping;
    },
  };
}
