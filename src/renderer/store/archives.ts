// A node's archives and audit log: listing them, checking whether an archive may be removed,
// and removing it (which refreshes the node's views).
import type { StoreContext } from './context';
import type { AppState } from './types';

export function createArchivesSlice(ctx: StoreContext): Pick<
  AppState,
  | 'archives'
  | 'audit'
  | 'loadArchives'
  | 'loadAudit'
  | 'checkArchiveRemoval'
  | 'removeArchive'
> {
  const { api, get, loadList } = ctx;
  const archivesSeq = ctx.seq.archives;
  const auditSeq = ctx.seq.audit;
  return {
    archives: {},
    audit: {},

    loadArchives: (name) => loadList('archives', archivesSeq, name, () => api.listArchives({ node: name })),
    loadAudit: (name) => loadList('audit', auditSeq, name, () => api.listAudit({ node: name })),
    checkArchiveRemoval: (node, path) => api.checkArchiveRemoval({ node, path }),
    async removeArchive(node, path, force) {
      const env = await api.removeArchive(force ? { node, path, force: true, confirm: force.confirm } : { node, path });
      await get().refreshNode(node);
      return env;
    },
  };
}
