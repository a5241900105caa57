// The import wizard's signatures (#48): keys added, "Check signatures" shows each image's verdict
// in the one plain-words sentence before Next, and Next waits while an image is refused unless
// unverified images are allowed; the import then carries the keys. Rendered to markup by React
// itself over the real store (no DOM needed); the api answers as core's check would.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it, vi } from 'vitest';
import { createStore } from 'zustand/vanilla';
import type { ArgsOf, Envelope, ResultOf } from '../../../src/shared/contract';
import type { LocalArchive } from '../../../src/shared/domain/archives';
import type { CheckedImage } from '../../../src/shared/signatures';
import { ReviewStep } from '../../../src/renderer/components/importWizard/ReviewStep';
import { StoreProvider } from '../../../src/renderer/context';
import { createAppStore, type AppState, type AppStore } from '../../../src/renderer/store';
import { fakeApi, imagesReport, job } from '../../doubles/api';
import { nodeDef } from '../../support/nodeDef';

const ok = <T>(result: T): Envelope<T> => ({ ok: true, result });
const D = (c: string) => `sha256:${c.repeat(64)}`;
const FP = '3f1c2a4b'.padEnd(64, 'e');
const AT = '2026-12-07T22:00:00.000Z';
const FILE = '/home/tech/site-apps.tar';
const KEY = '/home/tech/keys/cosign.pub';

const archive = (path: string): LocalArchive => ({
  path,
  size: 10,
  sha256: 'ab'.repeat(32),
  format: 'oci',
  compression: 'none',
  images: [{ name: 'lab.local/web:1', platforms: ['linux/amd64'], configDigest: D('a'), configDigests: [D('a')] }],
  uncompressedBytes: 20,
  warnings: [],
});

const SIGNED: CheckedImage = { name: 'lab.local/web:1', digest: D('1'), verdict: { verified: true, by: FP, format: 'bundle', at: AT } };
const UNSIGNED: CheckedImage = { name: 'lab.local/worker:1', digest: D('2'), verdict: { verified: false, refusal: { kind: 'no-signature' }, reason: 'no signature', at: AT } };

async function wizardAtReview(images: CheckedImage[]) {
  const checkArchiveSignatures = vi.fn(async ({ path }: { path: string }): Promise<Envelope<ResultOf<'signatures.checkArchive'>>> => ok({ path, images }));
  const startImport = vi.fn(async (_args: ArgsOf<'jobs.startImport'>) => ok(job({ id: 'j1' })));
  const api = fakeApi({
    listNodes: vi.fn(async () => ok([nodeDef('edge1')])),
    connectNode: vi.fn(async ({ name }) => ok({ name, state: 'connected' as const })),
    listJobs: vi.fn(async () => ok([])),
    getImagesReport: vi.fn(async () => ok(imagesReport())),
    listLostPins: vi.fn(async () => ok([])),
    getDiskPicture: vi.fn(async () => ({ ok: false as const, error: { code: 'NOT_FOUND' as const, message: 'not in this test' } })),
    inspectLocalArchive: vi.fn(async ({ path }) => ok(archive(path))),
    checkArchiveSignatures,
    startImport,
  });
  const store = createAppStore(api);
  await store.getState().init();
  store.getState().openImport();
  store.getState().addArchivePaths([FILE]);
  await vi.waitFor(() => expect(store.getState().wizard.archives[0]?.state).toBe('ok'));
  store.getState().setWizard({ step: 'review' });
  return { store, checkArchiveSignatures, startImport };
}

/** The review step as rendered now (a server render reads a store that starts where the app's is). */
const render = (store: AppStore): string =>
  renderToStaticMarkup(createElement(StoreProvider, { store: createStore<AppState>()(() => store.getState()), children: createElement(ReviewStep, { onBack() {}, onNext() {} }) }));
const text = (html: string): string => html.replace(/<wbr\/?>/g, '').replace(/<[^>]+>/g, ' ').replace(/&#x27;/g, "'").replace(/\s+/g, ' ');
const nextDisabled = (html: string): boolean => /<button[^>]*disabled=""[^>]*>Next: choose nodes/.test(html);

describe('import wizard: signatures on the review step', () => {
  it('without a key nothing is verified and Next is open, as before', async () => {
    const { store } = await wizardAtReview([SIGNED]);
    const html = render(store);
    expect(text(html)).toContain('Add a public key to check signatures.');
    expect(nextDisabled(html)).toBe(false);
  });

  it('a key added waits for the check; the check shows each verdict in plain words', async () => {
    const { store, checkArchiveSignatures } = await wizardAtReview([SIGNED, UNSIGNED]);
    store.getState().addSignatureFiles('keys', [KEY]);
    expect(nextDisabled(render(store))).toBe(true);
    expect(text(render(store))).toContain('Check the signatures to go on.');
    await store.getState().checkSignatures();
    expect(checkArchiveSignatures).toHaveBeenCalledWith({ path: FILE, keys: [KEY] });
    const html = render(store);
    expect(text(html)).toContain('lab.local/web:1 signed by key 3f1c2a4b…, verified 2026-12-07');
    expect(text(html)).toContain('lab.local/worker:1 not verified: no signature (2026-12-07)');
    expect(text(html)).toContain('1 image is refused: the import would be refused too.');
    expect(nextDisabled(html)).toBe(true);
  });

  it('"Import unsigned images too" opens Next, and the import carries the keys and the choice', async () => {
    const { store, startImport } = await wizardAtReview([SIGNED, UNSIGNED]);
    store.getState().addSignatureFiles('keys', [KEY]);
    await store.getState().checkSignatures();
    store.getState().setAllowUnsigned(true);
    expect(nextDisabled(render(store))).toBe(false);
    store.getState().setWizard({ step: 'nodes', nodes: ['edge1'] });
    await store.getState().startImports();
    expect(startImport.mock.calls[0]![0]).toMatchObject({ nodes: ['edge1'], path: FILE, keys: [KEY], allowUnsigned: true });
  });

  it('every image verified: Next opens; another key added makes the check stale again', async () => {
    const { store } = await wizardAtReview([SIGNED]);
    store.getState().addSignatureFiles('keys', [KEY]);
    await store.getState().checkSignatures();
    expect(nextDisabled(render(store))).toBe(false);
    expect(text(render(store))).toContain('site-apps.tar: 1 image verified');
    store.getState().addSignatureFiles('keys', ['/home/tech/keys/other.pub']);
    expect(store.getState().wizard.signatures.checks).toEqual({});
    expect(nextDisabled(render(store))).toBe(true);
  });

  it('a check that fails says so and keeps Next closed', async () => {
    const { store, checkArchiveSignatures } = await wizardAtReview([SIGNED]);
    checkArchiveSignatures.mockResolvedValueOnce({ ok: false, error: { code: 'INVALID_INPUT', message: 'cannot read /home/tech/keys/cosign.pub: no such file' } });
    store.getState().addSignatureFiles('keys', [KEY]);
    await store.getState().checkSignatures();
    const html = render(store);
    expect(text(html)).toContain('cannot read /home/tech/keys/cosign.pub: no such file');
    expect(text(html)).toContain('The signatures of site-apps.tar could not be checked.');
    expect(nextDisabled(html)).toBe(true);
  });
});
