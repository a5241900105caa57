// The import wizard's signature verification (#48): the public key and bundle files the
// technician adds, and checking every readable archive with them on this machine before Next.
// Nothing is sent by the check; the import itself verifies again with the same files.
import type { StoreContext } from './context';
import type { AppState, SignatureFileKind, WizardSignatures } from './types';

export const emptySignatures = (): WizardSignatures => ({ keys: [], bundles: [], allowUnsigned: false, checking: false, checks: {} });

/** The options the import is started with: none without a key (nothing to verify with). */
export function signatureImportOptions(s: WizardSignatures): { keys?: string[]; bundles?: string[]; allowUnsigned?: boolean } {
  if (s.keys.length === 0) return {};
  return { keys: s.keys, ...(s.bundles.length ? { bundles: s.bundles } : {}), ...(s.allowUnsigned ? { allowUnsigned: true } : {}) };
}

export function createWizardSignaturesSlice(
  ctx: StoreContext,
): Pick<AppState, 'addSignatureFiles' | 'removeSignatureFile' | 'pickSignatureFiles' | 'checkSignatures' | 'setAllowUnsigned'> {
  const { api, set, get } = ctx;
  // A change of files makes the last check stale: it is dropped, and an answer still on its way is too.
  let seq = 0;
  const patch = (p: Partial<WizardSignatures>) => set((s) => ({ wizard: { ...s.wizard, signatures: { ...s.wizard.signatures, ...p } } }));
  const files = (kind: SignatureFileKind, list: string[]) => {
    seq++;
    patch({ [kind]: list, checks: {}, checking: false });
  };
  return {
    addSignatureFiles(kind, paths) {
      const have = get().wizard.signatures[kind];
      const added = [...new Set(paths)].filter((p) => !have.includes(p));
      if (added.length) files(kind, [...have, ...added]);
    },
    removeSignatureFile(kind, path) {
      files(
        kind,
        get().wizard.signatures[kind].filter((p) => p !== path),
      );
    },
    async pickSignatureFiles(kind) {
      const env = await api.pickSignatureFiles({ kind });
      if (!env.ok) return env.error;
      get().addSignatureFiles(kind, env.result.paths);
      return null;
    },
    async checkSignatures() {
      const w = get().wizard;
      const { keys, bundles } = w.signatures;
      const paths = w.archives.filter((a) => a.state === 'ok').map((a) => a.path);
      if (keys.length === 0 || paths.length === 0) return;
      const mine = ++seq;
      patch({ checking: true, checks: {} });
      const checks: WizardSignatures['checks'] = {};
      for (const path of paths) {
        const env = await api.checkArchiveSignatures({ path, keys, ...(bundles.length ? { bundles } : {}), ...(w.direct ? { direct: true } : {}) });
        if (mine !== seq) return;
        checks[path] = env.ok ? { ok: true, check: env.result } : { ok: false, error: env.error };
      }
      patch({ checking: false, checks });
    },
    setAllowUnsigned(on) {
      patch({ allowUnsigned: on });
    },
  };
}
