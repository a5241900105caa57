// The image tools technicians use (Debian bookworm: podman 4.3, buildah 1.28, skopeo 1.9, umoci
// 0.4.7), run as argv arrays against private, throw-away storage: a vfs containers-storage
// (`--root`/`--runroot` in the corpus dir), the corpus dir's own signature policy and an empty
// registries.conf (so nothing reads or writes the machine's /var/lib/containers, and no short
// name is ever looked up on a registry, which the lab cannot reach anyway), and TMPDIR there too.
// Test tooling only.
import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';

export type Compression = 'none' | 'gzip' | 'zstd' | 'lz4' | 'bzip2';

export const SUFFIX: Record<Compression, string> = { none: '.tar', gzip: '.tar.gz', zstd: '.tar.zst', lz4: '.tar.lz4', bzip2: '.tar.bz2' };

/** The system compressors, reading a tar on stdin and writing the compressed stream on stdout. */
const COMPRESSOR: Record<Exclude<Compression, 'none'>, string[]> = {
  gzip: ['gzip', '-c', '-n'],
  zstd: ['zstd', '-q', '-c'],
  lz4: ['lz4', '-q', '-c'],
  bzip2: ['bzip2', '-c'],
};

export class ToolError extends Error {
  constructor(argv: string[], code: number | null, stderr: string) {
    super(`${argv.join(' ')} exited with ${code}: ${stderr.trim()}`);
    this.name = 'ToolError';
  }
}

interface RunOpts {
  env?: NodeJS.ProcessEnv;
  stdin?: string;
  stdout?: string;
}

/** Runs argv; resolves its stdout (or streams it into `stdout`, a file). Never through a shell. */
export function runTool(argv: string[], opts: RunOpts = {}): Promise<string> {
  const [cmd, ...args] = argv;
  return new Promise((resolve, reject) => {
    const child = spawn(cmd!, args, { stdio: ['pipe', 'pipe', 'pipe'], env: opts.env ?? process.env });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const sink = opts.stdout ? pipeline(child.stdout, createWriteStream(opts.stdout)) : null;
    if (!sink) child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', reject);
    child.on('close', (code) => {
      void (sink ?? Promise.resolve()).then(
        () => (code === 0 ? resolve(Buffer.concat(out).toString('utf8')) : reject(new ToolError(argv, code, Buffer.concat(err).toString('utf8')))),
        reject,
      );
    });
    if (opts.stdin) void pipeline(createReadStream(opts.stdin), child.stdin).catch(() => undefined);
    else child.stdin.end();
  });
}

/** `src` (a tar) compressed with the system tool into `dest`; `none` copies nothing and returns src. */
export async function compressTar(src: string, how: Compression, dest: string): Promise<string> {
  if (how === 'none') return src;
  await runTool(COMPRESSOR[how], { stdin: src, stdout: dest });
  return dest;
}

/** The four tools, sharing one private vfs storage under `dir`. */
export class ImageTools {
  readonly root: string;
  readonly runroot: string;
  private readonly env: NodeJS.ProcessEnv;
  /** The corpus's own signature policy (accept anything: every image is made locally). */
  readonly policy: string;

  constructor(private readonly dir: string) {
    this.root = join(dir, 'storage', 'root');
    this.runroot = join(dir, 'storage', 'run');
    this.policy = join(dir, 'policy.json');
    this.env = {
      ...process.env,
      TMPDIR: join(dir, 'tmp'),
      CONTAINERS_REGISTRIES_CONF: join(dir, 'registries.conf'),
      CONTAINERS_STORAGE_CONF: join(dir, 'storage.conf'),
    };
  }

  async init(): Promise<void> {
    for (const d of [this.root, this.runroot, join(this.dir, 'tmp'), join(this.dir, 'podman-tmp')]) await mkdir(d, { recursive: true });
    await writeFile(this.policy, JSON.stringify({ default: [{ type: 'insecureAcceptAnything' }] }));
    await writeFile(join(this.dir, 'registries.conf'), 'unqualified-search-registries = []\n');
    await writeFile(join(this.dir, 'storage.conf'), `[storage]\ndriver = "vfs"\nrunroot = "${this.runroot}"\ngraphroot = "${this.root}"\n`);
  }

  /** The containers-storage transport spec skopeo needs to read this storage. */
  storageRef(image: string): string {
    return `containers-storage:[vfs@${this.root}+${this.runroot}]${image}`;
  }

  private storageFlags(): string[] {
    return ['--root', this.root, '--runroot', this.runroot, '--storage-driver', 'vfs'];
  }

  buildah(args: string[]): Promise<string> {
    return runTool(['buildah', ...this.storageFlags(), ...args], { env: this.env });
  }

  /** podman without a service, journald, systemd cgroups or the machine's libpod state. */
  podman(args: string[]): Promise<string> {
    return runTool(
      ['podman', ...this.storageFlags(), '--tmpdir', join(this.dir, 'podman-tmp'), '--events-backend', 'none', '--cgroup-manager', 'cgroupfs', ...args],
      { env: this.env },
    );
  }

  skopeo(args: string[]): Promise<string> {
    return runTool(['skopeo', '--policy', this.policy, ...args], { env: this.env });
  }

  umoci(args: string[]): Promise<string> {
    return runTool(['umoci', ...args], { env: this.env });
  }

  tar(args: string[]): Promise<string> {
    return runTool(['tar', ...args], { env: this.env });
  }

  /** The version lines the corpus table names (what built the archives). */
  async versions(): Promise<Record<string, string>> {
    const first = async (argv: string[]) => (await runTool(argv, { env: this.env })).split('\n')[0]!.trim();
    return {
      podman: await first(['podman', '--version']),
      buildah: await first(['buildah', '--version']),
      skopeo: await first(['skopeo', '--version']),
      umoci: await first(['umoci', '--version']),
    };
  }
}
