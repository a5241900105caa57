// Credential dialogs: what a connection is asking (passphrase, password, keyboard-interactive
// answers) while it waits, oldest first, and sending the answers back. Answers are never stored.
import type { StoreContext } from './context';
import type { AppState } from './types';

export function createCredentialsSlice(ctx: StoreContext): Pick<
  AppState,
  | 'credentials'
  | 'loadPendingCredentials'
  | 'answerCredentials'
> {
  const { api, set, answered } = ctx;
  return {
    credentials: [],

    async loadPendingCredentials() {
      // An older bridge without the operation, or a failing transport: nothing to ask.
      if (typeof api.pendingCredentials !== 'function') return;
      const env = await api.pendingCredentials({}).catch(() => null);
      if (!env?.ok) return;
      const open = new Set(env.result.map((r) => r.id));
      set((s) => {
        // Drop what the other side no longer has open (answered elsewhere, timed out), add what is new.
        const kept = s.credentials.filter((r) => open.has(r.id));
        const fresh = env.result.filter((r) => !answered.has(r.id) && !kept.some((k) => k.id === r.id));
        return { credentials: [...kept, ...fresh] };
      });
    },
    async answerCredentials(id, answers) {
      answered.add(id);
      set((s) => ({ credentials: s.credentials.filter((r) => r.id !== id) }));
      const env = await api.answerCredentials({ id, answers });
      return env.ok ? null : env.error;
    },
  };
}
