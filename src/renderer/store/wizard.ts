// The import wizard: its step, the archives chosen and what inspecting them found, the target
// nodes and options, and starting one import job per archive. It lives in the store so it keeps
// its step while the user looks at a node.
import { holdingsOf, holdsEverything, type Holdings, type NodeImageKey } from '../../shared/archiveHoldings';
import { consistentImportOptions } from '../../shared/importOptions';
import type { StoreContext } from './context';
import { emptySignatures, signatureImportOptions } from './wizardSignatures';
import type { AppState, DraftArchive, ImportWizardState } from './types';

export function emptyWizard(): ImportWizardState {
  return { step: 'choose', archives: [], nodes: [], nodesChosen: false, pin: true, removeArchive: true, direct: false, jobIds: [], startErrors: [], starting: false, signatures: emptySignatures() };
}

/**
 * The nodes the nodes step starts with: every node not known to be unreachable (a failed
 * connection); one still connecting or not tried yet may well take the import.
 */
export function eligibleNodes(s: Pick<AppState, 'nodes' | 'statuses'>): string[] {
  return s.nodes.filter((n) => s.statuses[n.name]?.state !== 'error').map((n) => n.name);
}

/**
 * A node's images as last read: its images view's list, else the last fleet inspection's; null
 * when neither ever read them.
 */
function knownImages(s: Pick<AppState, 'images' | 'fleetRun'>, name: string): readonly NodeImageKey[] | null {
  const listed = s.images[name];
  if (listed?.loadedAt !== undefined) return listed.items;
  return s.fleetRun.results[name]?.images ?? s.fleetRun.report?.nodes.find((n) => n.node === name)?.images ?? null;
}

/** What each node holds of the wizard's readable archives' images (shared/archiveHoldings). */
export function importHoldings(s: Pick<AppState, 'nodes' | 'images' | 'fleetRun' | 'wizard'>): Record<string, Holdings> {
  const images = s.wizard.archives.flatMap((a) => (a.state === 'ok' && a.archive ? a.archive.images : []));
  return Object.fromEntries(s.nodes.map((n) => [n.name, holdingsOf(images, knownImages(s, n.name))]));
}

/**
 * The nodes the import goes to: the user's choice once made; before that, every node that can
 * take the import and lacks one of the archives' images (or whose images were never read). It
 * follows the inventories as they arrive until the user ticks or unticks a node.
 */
export function wizardNodes(s: Pick<AppState, 'nodes' | 'statuses' | 'images' | 'fleetRun' | 'wizard'>): string[] {
  if (s.wizard.nodesChosen) return s.wizard.nodes;
  const held = importHoldings(s);
  return eligibleNodes(s).filter((n) => !holdsEverything(held[n] ?? { known: false }));
}

/** The pin / remove choices a patch makes itself (they win over the defaults it would restore). */
function pickOptions(patch: Partial<Pick<ImportWizardState, 'pin' | 'removeArchive'>>): Partial<Pick<ImportWizardState, 'pin' | 'removeArchive'>> {
  return { ...(patch.pin !== undefined ? { pin: patch.pin } : {}), ...(patch.removeArchive !== undefined ? { removeArchive: patch.removeArchive } : {}) };
}

export function createWizardSlice(ctx: StoreContext): Pick<
  AppState,
  | 'wizard'
  | 'pathForFile'
  | 'openImport'
  | 'closeImport'
  | 'resetImport'
  | 'setWizard'
  | 'addArchivePaths'
  | 'removeArchivePath'
  | 'pickArchives'
  | 'startImports'
> {
  const { api, set, get, upsertJob, env } = ctx;
  return {
    wizard: emptyWizard(),
    pathForFile: env.pathForFile ?? null,

    openImport() {
      set({ view: 'import' });
    },
    closeImport() {
      set({ view: 'node' });
      const sel = get().selected;
      if (sel) get().select(sel);
    },
    resetImport() {
      set({ wizard: emptyWizard() });
    },
    setWizard(patch) {
      set((s) => {
        const next = { ...s.wizard, ...patch };
        if (patch.nodes) next.nodesChosen = true;
        // Reaching the nodes step before choosing any: every node that can take the import and
        // lacks something is ticked (wizardNodes, which the step keeps following until a choice).
        else if (patch.step === 'nodes' && !s.wizard.nodesChosen) next.nodes = wizardNodes(s);
        // Back from a direct delivery (which forced pin on, removal off): the images dir's defaults.
        if (patch.direct === false && s.wizard.direct) Object.assign(next, { pin: true, removeArchive: true }, pickOptions(patch));
        // Removing the archive is only safe once its pins are durable, never one without the
        // other; a direct delivery always pins and has nothing to remove (shared/importOptions).
        return { wizard: consistentImportOptions(next) };
      });
    },
    addArchivePaths(paths) {
      const have = new Set(get().wizard.archives.map((a) => a.path));
      const added = [...new Set(paths)].filter((p) => !have.has(p));
      if (added.length === 0) return;
      const putArchive = (path: string, v: DraftArchive) =>
        set((s) => ({ wizard: { ...s.wizard, archives: s.wizard.archives.map((a) => (a.path === path ? v : a)) } }));
      set((s) => ({
        wizard: { ...s.wizard, archives: [...s.wizard.archives, ...added.map((path) => ({ path, state: 'inspecting' as const }))] },
      }));
      for (const path of added) {
        void api.inspectLocalArchive({ path }).then((env) => {
          if (!get().wizard.archives.some((a) => a.path === path)) return; // removed meanwhile
          if (env.ok) putArchive(path, { path, state: 'ok', archive: env.result });
          else putArchive(path, { path, state: env.error.code === 'REFUSED' ? 'refused' : 'error', error: env.error });
        });
      }
    },
    removeArchivePath(path) {
      set((s) => ({ wizard: { ...s.wizard, archives: s.wizard.archives.filter((a) => a.path !== path) } }));
    },
    async pickArchives() {
      const env = await api.pickArchives({});
      if (!env.ok) return env.error;
      get().addArchivePaths(env.result.paths);
      return null;
    },
    async startImports() {
      const w = get().wizard;
      if (w.starting) return;
      const known = new Set(get().nodes.map((n) => n.name));
      const nodes = wizardNodes(get()).filter((n) => known.has(n));
      const ready = w.archives.filter((a) => a.state === 'ok');
      if (nodes.length === 0 || ready.length === 0) return;
      set((s) => ({ wizard: { ...s.wizard, starting: true, startErrors: [] } }));
      const jobIds: string[] = [];
      const startErrors: ImportWizardState['startErrors'] = [];
      for (const a of ready) {
        const o = consistentImportOptions(w);
        const env = await api.startImport({ nodes, path: a.path, pin: o.pin, removeArchive: o.removeArchive, ...(o.direct ? { direct: true } : {}), ...signatureImportOptions(w.signatures) });
        if (env.ok) {
          jobIds.push(env.result.id);
          upsertJob(env.result);
        } else startErrors.push({ path: a.path, error: env.error });
      }
      set((s) => ({ wizard: { ...s.wizard, nodes, starting: false, jobIds, startErrors, step: jobIds.length ? 'run' : 'nodes' } }));
      ctx.pollKick?.();
    },
  };
}
