// The import wizard's nodes step says what each node already holds of the archive's images and
// ticks only the nodes that lack one (shared/archiveHoldings); the user may still tick any node.
// Rendered to markup by React itself over the real store (no DOM needed).
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it, vi } from 'vitest';
import { createStore } from 'zustand/vanilla';
import type { Envelope, ResultOf } from '../../../src/shared/contract';
import type { LocalArchive } from '../../../src/shared/domain/archives';
import type { NodeStatus } from '../../../src/shared/domain/connection';
import type { ImageRef } from '../../../src/shared/domain/images';
import { NodesStep } from '../../../src/renderer/components/importWizard/NodesStep';
import { StoreProvider } from '../../../src/renderer/context';
import { createAppStore, type AppState, type AppStore } from '../../../src/renderer/store';
import { fakeApi, imagesReport, job } from '../../doubles/api';
import { nodeDef } from '../../support/nodeDef';
import { imageRef } from '../../support/imageRef';

const ok = <T>(result: T): Envelope<T> => ({ ok: true, result });
const id = (c: string) => `sha256:${c.repeat(64)}`;
const WEB = 'docker.io/library/site-web:2.4';
const WORKER = 'docker.io/library/site-worker:2.4';

const node = nodeDef;

const ref = (name: string, imageId: string): ImageRef =>
  imageRef(name, { digest: id('f'), mediaType: 'application/vnd.docker.distribution.manifest.v2+json', imageId, reason: '' });

// The archive as the wizard's inspection reads it: a docker save naming the images by short name.
const archive = (path: string): LocalArchive => ({
  path,
  size: 10,
  sha256: 'ab'.repeat(32),
  format: 'docker',
  compression: 'gzip',
  images: [
    { name: 'site-web:2.4', platforms: ['linux/amd64'], configDigest: id('a'), configDigests: [id('a')] },
    { name: 'site-worker:2.4', platforms: ['linux/amd64'], configDigest: id('b'), configDigests: [id('b')] },
  ],
  uncompressedBytes: 20,
  warnings: [],
});

// full holds both images; partial only the web one (its worker tag is an older image); bare
// none; unread answered but its images could not be read; down never connected.
const HELD: Record<string, ImageRef[]> = {
  full: [ref(WEB, id('a')), ref(`docker.io/library/site-web@${id('f')}`, id('a')), ref(WORKER, id('b')), ref(id('b'), id('b'))],
  partial: [ref(WEB, id('a')), ref(WORKER, id('9'))],
  bare: [ref('docker.io/library/other:1', id('a'))],
};

async function wizardAtNodes(): Promise<{ store: AppStore; startImport: ReturnType<typeof vi.fn> }> {
  const startImport = vi.fn(async ({ nodes, path }: { nodes: string[]; path: string }) => ok(job({ id: `j-${path}`, nodes: nodes.map((n) => ({ node: n, state: 'running' as const, phase: 'queued' as const, bytesDone: 0, bytesTotal: 10, rate: 0, eta: null, message: '' })) })));
  const api = fakeApi({
    listNodes: vi.fn(async () => ok(['full', 'partial', 'bare', 'unread', 'down'].map(node))),
    connectNode: vi.fn(async ({ name }): Promise<Envelope<NodeStatus>> =>
      name === 'down' ? { ok: false, error: { code: 'UNREACHABLE', message: 'Cannot reach down:22.' } } : ok({ name, state: 'connected' }),
    ),
    getImagesReport: vi.fn(async ({ node: n }): Promise<Envelope<ResultOf<'images.report'>>> =>
      HELD[n] ? ok({ ...imagesReport(), images: HELD[n] }) : { ok: false, error: { code: 'TIMEOUT', message: 'no answer' } },
    ),
    listLostPins: vi.fn(async () => ok([])),
    getDiskPicture: vi.fn(async () => ({ ok: false as const, error: { code: 'NOT_FOUND' as const, message: 'not in this test' } })),
    inspectLocalArchive: vi.fn(async ({ path }) => ok(archive(path))),
    startImport,
    listJobs: vi.fn(async () => ok([])),
  });
  const store = createAppStore(api);
  await store.getState().init();
  await vi.waitFor(() => expect(['full', 'partial', 'bare', 'unread'].map((n) => store.getState().images[n]?.state)).toEqual(['ready', 'ready', 'ready', 'error']));
  store.getState().openImport();
  store.getState().addArchivePaths(['/home/tech/site-apps.tar.gz']);
  await vi.waitFor(() => expect(store.getState().wizard.archives[0]?.state).toBe('ok'));
  store.getState().setWizard({ step: 'review' });
  store.getState().setWizard({ step: 'nodes' });
  return { store, startImport };
}

/**
 * The step as rendered now. A server render reads a zustand store's initial state, so the step
 * is rendered over a store that starts where the app's store is now.
 */
const render = (store: AppStore): string =>
  renderToStaticMarkup(
    createElement(StoreProvider, { store: createStore<AppState>()(() => store.getState()), children: createElement(NodesStep, { onBack() {} }) }),
  );

/** Each node's line as a person reads it, and whether its box is ticked. */
function nodeLines(store: AppStore): Record<string, { ticked: boolean; text: string }> {
  const html = render(store);
  const out: Record<string, { ticked: boolean; text: string }> = {};
  for (const m of html.matchAll(/<label[^>]*data-testid="pick-node-([^"]+)"[^>]*>(.*?)<\/label>/g)) {
    out[m[1]!] = {
      ticked: /<input[^>]*type="checkbox"[^>]*checked=""/.test(m[2]!),
      text: m[2]!.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim(),
    };
  }
  return out;
}

const pageText = (store: AppStore): string =>
  render(store)
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ');

describe('import wizard: the nodes step', () => {
  it('says what each node holds and ticks only the reachable nodes that lack an image', async () => {
    const { store } = await wizardAtNodes();
    const lines = nodeLines(store);
    expect(Object.keys(lines)).toEqual(['full', 'partial', 'bare', 'unread', 'down']);
    expect(lines['full']).toEqual({ ticked: false, text: expect.stringContaining('has all 2 images') });
    expect(lines['partial']).toEqual({ ticked: true, text: expect.stringContaining(`lacks 1 of 2 images: ${WORKER}`) });
    expect(lines['bare']).toEqual({ ticked: true, text: expect.stringContaining(`lacks 2 of 2 images: ${WEB}, ${WORKER}`) });
    // Images never read: it may lack anything, so it is ticked.
    expect(lines['unread']).toEqual({ ticked: true, text: expect.stringContaining('images not read yet') });
    // Its connection failed: left out, as before.
    expect(lines['down']!.ticked).toBe(false);
    const text = pageText(store);
    expect(text).toContain('Not ticked: full (it holds every image already). Tick it to import anyway.');
    expect(text).toContain('Not ticked: down (its connection failed).');
    expect(text).toContain('Import 1 archive to 3 nodes');
  });

  it('the pre-ticked nodes are the ones the import goes to', async () => {
    const { store, startImport } = await wizardAtNodes();
    await store.getState().startImports();
    expect(startImport).toHaveBeenCalledTimes(1);
    expect(startImport.mock.calls[0]![0]).toMatchObject({ nodes: ['partial', 'bare', 'unread'], path: '/home/tech/site-apps.tar.gz' });
  });

  it('the user may tick a node that holds everything, and the choice is kept', async () => {
    const { store, startImport } = await wizardAtNodes();
    store.getState().setWizard({ nodes: ['full', 'partial'] });
    const lines = nodeLines(store);
    expect([lines['full']!.ticked, lines['partial']!.ticked, lines['bare']!.ticked]).toEqual([true, true, false]);
    expect(lines['full']!.text).toContain('has all 2 images');
    expect(pageText(store)).not.toContain('holds every image already');
    // A later inventory no longer changes the ticks: the user chose.
    await store.getState().loadImages('bare');
    expect(nodeLines(store)['bare']!.ticked).toBe(false);
    await store.getState().startImports();
    expect(startImport.mock.calls[0]![0]).toMatchObject({ nodes: ['full', 'partial'] });
  });
});
