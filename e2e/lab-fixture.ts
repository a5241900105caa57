// The set-up every lab-*.spec.ts shares: real lab nodes (containerd + sshd, lab/), the real
// service handlers over a private HOLDFAST_HOME in a temporary directory, the nodes added to
// that home, and the UI opened over those handlers (the served UI in Chromium, the desktop app in
// Electron: the `holdfast` fixture decides). What differs per spec (the nodes' images, k3s
// releases, watchers, extra nodes) goes in `prepare` and `configure`; the spec's assertions stay
// in the spec.
//
// Registers the suite's beforeAll/afterAll (serial mode: the tests share one lab) and returns
// accessors that are valid once beforeAll ran.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startLab, type Lab, type LabNodeHandle } from '../lab/index.ts';
import { writeImageArchive, type WrittenImage } from '../lab/fixtures.ts';
import { emulateK3sStart } from '../lab/k3s.ts';
import { remedyCommand } from '../src/cli/remedyText';
import { createHandlers, type Service } from '../src/core/service';
import { test, type HoldfastFixture, type Page } from './fixtures';

/** The k3s release the lab's stand-in answers in these specs. */
export const K3S_RELEASE = 'v1.33.7+k3s1';

/**
 * A node as a technician finds it: k3s answers `k3s --version` (without the lab's stand-in the
 * app says "k3s/RKE2 not detected" and judges fates by the safest rules of an unknown release),
 * and an archive of two images in its images dir, imported and pinned by a k3s start.
 */
export async function k3sNodeWithApps(node: LabNodeHandle, archive = 'apps.tar'): Promise<WrittenImage[]> {
  await node.installDistroBinary('k3s', K3S_RELEASE);
  const written = await writeImageArchive(path.join(node.hostImagesDir, archive), {
    format: 'docker',
    images: [{ name: 'docker.io/library/app-a:1.0' }, { name: 'docker.io/library/app-b:1.0' }],
  });
  await emulateK3sStart(node);
  return written.images;
}

export interface LabPrepare {
  readonly lab: Lab;
  /** The spec's own temporary directory (removed in afterAll); the home is `home` inside it. */
  readonly dir: string;
  /** Something to stop after the handlers and before the lab (a k3s watcher…). */
  onStop(stop: () => Promise<void>): void;
}

export interface LabSuiteOptions {
  /** Lab node names. */
  nodes: string[];
  /** Short name of the spec, for its temporary directory. */
  name: string;
  /** The nodes' state before the app knows them (images, k3s stand-ins, watchers). */
  prepare?(setup: LabPrepare): Promise<void>;
  /** Add every lab node to the home before the UI opens (default); false: the spec adds them. */
  addNodes?: boolean;
  /** The group every added node belongs to. */
  group?: string;
  /** After the nodes are added: more settings over the handlers (e.g. a broken node). */
  configure?(handlers: Service, setup: LabPrepare): Promise<void>;
}

export interface OpenedPage {
  page: Page;
  /** Uncaught errors of the page (a spec asserts there are none). */
  errors: string[];
}

export interface LabSuite {
  readonly lab: Lab;
  node(name: string): LabNodeHandle;
  readonly dir: string;
  readonly home: string;
  readonly handlers: Service;
  /**
   * How often the served UI loaded a node's images (the app loads them with their needs:
   * images.report). Only the served UI's calls: the desktop app runs its own service.
   */
  readonly reports: number;
  /** Opens the UI over this suite's handlers and home, recording the page's uncaught errors. */
  open(holdfast: HoldfastFixture): Promise<OpenedPage>;
}

export function labSuite(opts: LabSuiteOptions): LabSuite {
  let lab: Lab | undefined;
  let dir: string | undefined;
  let handlers: Service | undefined;
  let reports = 0;
  const stops: Array<() => Promise<void>> = [];
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the lab suite is not set up: use it inside a test, after beforeAll');
    return value;
  };

  test.describe.configure({ mode: 'serial' });

  test.beforeAll(async () => {
    test.setTimeout(180_000);
    lab = await startLab({ nodes: opts.nodes });
    dir = await mkdtemp(path.join(tmpdir(), `hf-e2e-${opts.name}-`));
    const setup: LabPrepare = { lab, dir, onStop: (stop) => void stops.push(stop) };
    await opts.prepare?.(setup);

    handlers = createHandlers({ home: path.join(dir, 'home'), remedyCommand });
    if (opts.addNodes ?? true) {
      // The lab's known_hosts already lists its nodes: first contact is lab-images' story only.
      for (const n of lab.nodes) {
        await handlers['nodes.add']({
          node: {
            name: n.name,
            host: n.host,
            port: n.port,
            identity: lab.clientKey,
            knownHosts: lab.knownHosts,
            ...(opts.group ? { group: opts.group } : {}),
          },
        });
      }
    }
    await opts.configure?.(handlers, setup);
    // Count the node loads: an update on screen must come from a pushed event (lab-live), a
    // Refresh must have asked the node again (lab-needs).
    const report = handlers['images.report'];
    handlers['images.report'] = async (args) => {
      reports++;
      return report(args);
    };
  });

  test.afterAll(async () => {
    test.setTimeout(120_000);
    await handlers?.dispose();
    for (const stop of stops) await stop();
    await lab?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  return {
    get lab() {
      return ready(lab);
    },
    node: (name) => ready(lab).node(name),
    get dir() {
      return ready(dir);
    },
    get home() {
      return path.join(ready(dir), 'home');
    },
    get handlers() {
      return ready(handlers);
    },
    get reports() {
      return reports;
    },
    async open(holdfast) {
      const page = await holdfast.open({ handlers: ready(handlers), home: path.join(ready(dir), 'home') });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      return { page, errors };
    },
  };
}
