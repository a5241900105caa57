// Transport selection. In Electron the sandboxed preload exposes `window.holdfast`; in a
// browser opened by `holdfast serve` the same HoldfastApi is implemented over loopback HTTP.
import { operations, type Envelope, type HoldfastApi, type Operation } from '../shared/contract';

/** The desktop preload's bridge: the contract's operations plus `pathForFile` (no IPC). */
export type DesktopBridge = HoldfastApi & { pathForFile?: (file: File) => string };

declare global {
  interface Window {
    holdfast?: DesktopBridge;
  }
}

export const TOKEN_HEADER = 'x-holdfast-token';
export const TOKEN_STORAGE_KEY = 'holdfast.token';

interface LocationLike {
  href: string;
}
interface StorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}
interface HistoryLike {
  replaceState(data: unknown, unused: string, url?: string | URL | null): void;
  readonly state: unknown;
}

/**
 * Read the access token once from `?token=` and move it to sessionStorage, removing it from
 * the address bar (and so from history, bookmarks and screenshots). Later reloads of the tab
 * find it in sessionStorage.
 */
export function takeToken(location: LocationLike, storage: StorageLike, history: HistoryLike): string | null {
  const url = new URL(location.href);
  const fromUrl = url.searchParams.get('token');
  if (fromUrl) {
    try {
      storage.setItem(TOKEN_STORAGE_KEY, fromUrl);
    } catch {
      // Storage disabled: the token still works for this page's lifetime.
    }
    url.searchParams.delete('token');
    history.replaceState(history.state, '', url.pathname + url.search + url.hash);
    return fromUrl;
  }
  try {
    return storage.getItem(TOKEN_STORAGE_KEY);
  } catch {
    return null;
  }
}

type FetchLike = (input: string, init: { method: string; headers: Record<string, string>; body: string }) => Promise<{
  status: number;
  json(): Promise<unknown>;
}>;

function isEnvelope(value: unknown): value is Envelope<unknown> {
  if (!value || typeof value !== 'object') return false;
  const v = value as { ok?: unknown; error?: unknown };
  return v.ok === true ? 'result' in v : v.ok === false && typeof v.error === 'object' && v.error !== null;
}

/** HoldfastApi over `POST /api/<channel>`; never throws, failures come back as envelopes. */
export function createHttpApi(opts: { token: string | null; baseUrl?: string; fetch?: FetchLike }): HoldfastApi {
  const doFetch: FetchLike = opts.fetch ?? ((input, init) => fetch(input, init));
  const base = opts.baseUrl ?? '';
  const call = async (channel: string, args: unknown): Promise<Envelope<unknown>> => {
    if (!opts.token) {
      return {
        ok: false,
        error: {
          code: 'REFUSED',
          message: 'This page has no access token.',
          hint: 'Open the full address that `holdfast serve` printed, including its ?token=… part.',
        },
      };
    }
    try {
      const res = await doFetch(`${base}/api/${channel}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [TOKEN_HEADER]: opts.token },
        body: JSON.stringify(args ?? {}),
      });
      const body: unknown = await res.json().catch(() => null);
      if (isEnvelope(body)) return body;
      return {
        ok: false,
        error: { code: 'INTERNAL', message: `Unexpected answer from the Holdfast server (HTTP ${res.status}).` },
      };
    } catch {
      return {
        ok: false,
        error: {
          code: 'UNREACHABLE',
          message: 'Cannot reach the Holdfast server.',
          hint: 'Check that `holdfast serve` is still running, then retry.',
        },
      };
    }
  };
  const api = {} as Record<Operation, (args: unknown) => Promise<Envelope<unknown>>>;
  for (const op of Object.keys(operations) as Operation[]) {
    const channel = operations[op];
    api[op] = (args) => call(channel, args);
  }
  return api as unknown as HoldfastApi;
}

/** The transport for this page: the preload bridge in Electron, else loopback HTTP. */
export function resolveApi(win: Window = window): HoldfastApi {
  if (win.holdfast) return win.holdfast;
  return createHttpApi({ token: takeToken(win.location, win.sessionStorage, win.history) });
}

/** Desktop only: the local path of a dropped File; null in a browser (a dropped File has none). */
export function resolvePathForFile(win: Window = window): ((file: File) => string) | null {
  const fn = win.holdfast?.pathForFile;
  return typeof fn === 'function' ? (file) => fn(file) : null;
}
