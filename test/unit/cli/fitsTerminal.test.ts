// Output for people fits a 100-column terminal and says each thing once (#49 item 13): `node add`
// and `node edit`'s images dir line, `import` and `upload`'s line per node, the progress board's
// notes, `inspect`'s "Needs attention" (an unreachable node's hint once), and the banner of
// `npm run lab` (its commands continued with ` \`, still runnable when pasted). Long names and
// paths as real sites have them; a line wraps at a word, never inside one.
import { describe, expect, it } from 'vitest';
import { bannerCommands, labBanner } from '../../../lab/banner';
import { fleetText } from '../../../src/cli/commands/inspect';
import { textWidth } from '../../../src/cli/fit';
import { ProgressBoard } from '../../../src/cli/progress';
import { Screen } from '../../../src/cli/screen';
import { importResultLine, uploadResultLine } from '../../../src/cli/transferJob';
import { completeNode } from '../../../src/core/config/nodes';
import { computeDrift, summarizeFleet, type FleetNodeResult, type FleetReport } from '../../../src/core/usecases/fleet';
import { summary } from '../../../src/core/usecases/import/run';
import type { JobNodeResult } from '../../../src/shared/domain/jobs';
import { runCli, useTempHome } from '../../support/cliInProcess';
import { Screen as Terminal } from '../../support/screen';

const COLS = 100;
const NODE = 'edge-site-a-rack-07-worker-12';
const DEEP_DIR = '/mnt/nvme0n1p3/var/lib/rancher/k3s/storage-pool-01/edge-site-a-rack-07/agent/images';
const ARCHIVE = 'extra/site-apps/holdfast-telemetry-collector-2.5.1-build.1234.tar.zst';
const SHA = '5ad44c7d16e3b2f0c9a8e1d4f7b6a5c3e2d1f0a9b8c7d6e5f4a3b2c1d0e9f8a7';

const words = (s: string) => s.split(/\s+/).filter((w) => w !== '');
const wider = (text: string, cols = COLS) => text.split('\n').filter((l) => textWidth(l) > cols);

/** `text` fitted to COLS: no line wider, and the same words as unfitted (nothing cut inside a word). */
function fitsWhole(fitted: string, plain: string): void {
  expect(wider(fitted), fitted).toEqual([]);
  expect(words(fitted)).toEqual(words(plain));
}

describe('node add and node edit on a terminal 100 columns wide', () => {
  useTempHome('hf-fits-');

  async function run(columns: number | null, ...args: string[]) {
    const r = await runCli(args, { columns: () => columns, errColumns: () => columns });
    expect(r.code, r.stderr).toBe(0);
    return r.stdout;
  }

  it("the images dir line wraps at words: the distro's default, and a deep dir given by hand", async () => {
    const added = await run(COLS, 'node', 'add', NODE, '--host', '10.20.7.12', '--no-check');
    expect(words(added).join(' ')).toContain("k3s's default; the node's distro and data-dir are read when Holdfast connects");
    await run(null, 'node', 'rm', NODE);
    fitsWhole(added, await run(null, 'node', 'add', NODE, '--host', '10.20.7.12', '--no-check'));
    // wrapped under its own label, two columns in
    expect(added.split('\n').slice(2).every((l) => l.startsWith('    '))).toBe(true);

    const edited = await run(COLS, 'node', 'edit', NODE, '--images-dir', DEEP_DIR, '--no-check');
    expect(edited).toContain(`  images dir: ${DEEP_DIR}`);
    expect(wider(edited)).toEqual([]);
    expect(words(edited)).toContain('(as');
  });
});

describe('import and upload: each node ends with one line that fits', () => {
  const screen = new Screen(true, COLS);
  const result: JobNodeResult = {
    relPath: ARCHIVE,
    sha256: SHA,
    uploaded: true,
    resumedFrom: 0,
    summary: summary({
      uploaded: true,
      relPath: ARCHIVE,
      pinned: 6,
      verified: { images: 2, refs: 6 },
      removed: false,
      warnings: [],
      kept: ['Still pinned, but k3s re-imports the archive at its next start and pins its images again as its own: remove the archive to keep them durable.'],
    }),
  };

  it('ok with what was done, FAILED with the error and its hint', () => {
    fitsWhole(importResultLine(screen, NODE, { result }), importResultLine(Screen.plain, NODE, { result }));
    const failed = { message: `the archive ${ARCHIVE} declares a layer of 2 TiB for a blob of 5 bytes`, hint: 'Build the archive again (skopeo copy, docker save) and import the new one.' };
    fitsWhole(importResultLine(screen, NODE, { failed }), importResultLine(Screen.plain, NODE, { failed }));
    // piped: one line, as scripts read it
    expect(importResultLine(Screen.plain, NODE, { result }).split('\n')).toHaveLength(1);
  });

  it('upload: where it went, its size and SHA-256 (whole: it is compared with the file)', () => {
    for (const r of [result, { ...result, uploaded: false }, { ...result, resumedFrom: 96 * 1024 ** 2 }]) {
      const fitted = uploadResultLine(screen, NODE, r, 179_306_496);
      fitsWhole(fitted, uploadResultLine(Screen.plain, NODE, r, 179_306_496));
      expect(fitted).toContain(SHA);
    }
  });

  it("the progress board's notes (the archive's description) wrap at words on the terminal", () => {
    let written = '';
    const board = new ProgressBoard({ isTTY: true, columns: COLS, rows: 24, write: (s: string) => ((written += s), true) }, { timer: false });
    const note = `holdfast-telemetry-collector-2.5.1-build.1234.tar.zst: oci archive, zstd, 171 MiB, 2 images, sha256 ${SHA}`;
    board.note(note);
    board.close();
    const lines = new Terminal(COLS).write(written).text();
    expect(words(lines.join('\n'))).toEqual(words(note));
    expect(lines.length).toBeGreaterThan(1);
  });
});

describe('inspect: Needs attention', () => {
  const down: FleetNodeResult = {
    node: NODE,
    reachable: false,
    error: { code: 'UNREACHABLE', message: 'Cannot reach 10.20.7.12:22: connection refused.', hint: 'Check that sshd runs on the node and listens on that port.' },
    versions: null,
    images: null,
    archives: null,
    disk: null,
  };
  const drift = computeDrift([down]);
  const report: FleetReport = { generatedAt: '2026-12-07T16:00:00Z', nodes: [down], drift, summary: summarizeFleet([down], drift) };
  const defs = [completeNode({ name: NODE, host: '10.20.7.12', knownHosts: '/kh' })];

  it("says an unreachable node's hint once, on a terminal and piped", () => {
    for (const screen of [new Screen(true, COLS), Screen.plain]) {
      const text = fleetText(report, defs, screen);
      const attention = text.slice(text.indexOf('Needs attention:'));
      expect(attention.split('Check that sshd runs').length - 1, attention).toBe(1);
      expect(attention).toContain(`→ Check that sshd runs on the node and listens on that port.`);
      if (screen.width !== null) expect(wider(text)).toEqual([]);
    }
  });
});

describe('the banner of npm run lab', () => {
  const dir = '/home/technician/labs/site-a';
  const banner = (width: number) =>
    labBanner(
      {
        distro: 'k3s',
        release: 'v1.33.7+k3s1',
        containerdVersion: '2.1.9+unknown',
        startedMs: 850,
        dir,
        clientKey: `${dir}/id_ed25519`,
        knownHosts: `${dir}/known_hosts`,
        seed: true,
        nodes: [1, 2].map((i) => ({
          name: `lab1-n${i}`,
          user: 'root',
          host: '127.0.0.1',
          port: 34616 + i,
          hostKeyFingerprint: 'SHA256:MZmquwWXsruUBq73eVfjuHtoaHqLknmO3iD3kI/ki90',
          hostSocket: `${dir}/lab1-n${i}/run-k3s/containerd/containerd.sock`,
          hostImagesDir: `${dir}/lab1-n${i}/rancher/k3s/agent/images`,
          ctrBinary: '/var/cache/holdfast-lab/containerd/2/ctr',
          server: i === 1,
        })),
      },
      width,
    );

  it('fits 100 (and 80) columns; its commands, joined again, are the ones to run', () => {
    for (const width of [COLS, 80]) {
      const text = banner(width);
      expect(wider(text, width), text).toEqual([]);
      const commands = bannerCommands(text);
      expect(commands).toContain(`bin/holdfast.mjs node add lab1-n1 --host 127.0.0.1 --port 34617 --identity ${dir}/id_ed25519 --known-hosts ${dir}/known_hosts`);
      expect(commands).toContain(`/var/cache/holdfast-lab/containerd/2/ctr -a ${dir}/lab1-n2/run-k3s/containerd/containerd.sock -n k8s.io images ls`);
      expect(commands).toContain(`ssh -i ${dir}/id_ed25519 -p 34618 -o UserKnownHostsFile=${dir}/known_hosts root@127.0.0.1`);
      expect(commands).toContain(`npm run lab -- k3s-start lab1-n1 --dir ${dir}`);
    }
    // Wide enough, nothing is continued.
    expect(banner(400)).not.toContain(' \\\n');
  });
});
