// Transport selection. In Electron the sandboxed preload exposes `window.holdfast`; in a
// browser opened by `holdfast serve` the same HoldfastApi is implemented over loopback HTTP.
import { isLiveEvent, operations, type Envelope, type HoldfastApi, type LiveApi, type LiveEvent, type Operation } from '../shared/contract';
import { TOKEN_HEADER } from '../shared/serveProtocol';
import { unpackEnvelope } from '../shared/wirePack';

/** The desktop preload's bridge: the contract's operations plus `pathForFile` (no IPC). */
export type DesktopBridge = HoldfastApi & Partial<LiveApi> & { pathForFile?: (file: File) => string };

/** What the store talks to, whatever the transport: the operations plus live events. */
export type ClientApi = HoldfastApi & Partial<LiveApi>;

declare global {
  interface Window {
    holdfast?: DesktopBridge;
  }
}

export { TOKEN_HEADER };
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

/** Split a Server-Sent Events buffer into complete events' data (JSON text); returns the rest. */
export function parseSse(buffer: string): { data: string[]; rest: string } {
  const data: string[] = [];
  const blocks = buffer.replace(/\r\n/g, '\n').split('\n\n');
  const rest = blocks.pop() ?? '';
  for (const block of blocks) {
    const lines = block.split('\n').filter((l) => l.startsWith('data:'));
    if (lines.length) data.push(lines.map((l) => l.slice(5).replace(/^ /, '')).join('\n'));
  }
  return { data, rest };
}

type StreamFetch = (input: string, init: { headers: Record<string, string>; signal: AbortSignal; cache: 'no-store' }) => Promise<{
  ok: boolean;
  body: ReadableStream<Uint8Array> | null;
}>;

/**
 * Live events over `GET /api/events`, read with fetch() so the token stays in a header (an
 * EventSource cannot send one, and a token in the URL would land in logs and history). One
 * stream while anyone listens; it reconnects by itself (0.5 s → 10 s) when the server drops.
 */
export function createEventStream(opts: { token: string | null; baseUrl?: string; fetch?: StreamFetch }): LiveApi['onEvent'] {
  const listeners = new Set<(e: LiveEvent) => void>();
  const doFetch: StreamFetch = opts.fetch ?? ((input, init) => fetch(input, init));
  let abort: AbortController | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let failures = 0;

  const run = async (ctl: AbortController) => {
    try {
      const res = await doFetch(`${opts.baseUrl ?? ''}/api/events`, {
        headers: { [TOKEN_HEADER]: opts.token ?? '', accept: 'text/event-stream' },
        signal: ctl.signal,
        cache: 'no-store',
      });
      if (!res.ok || !res.body) throw new Error('no event stream');
      failures = 0;
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        const parsed = parseSse(buffer);
        buffer = parsed.rest;
        for (const d of parsed.data) {
          let e: unknown;
          try {
            e = JSON.parse(d);
          } catch {
            continue;
          }
          if (isLiveEvent(e)) for (const l of [...listeners]) l(e);
        }
      }
    } catch {
      // dropped or refused: retried below while someone listens
    }
    if (ctl.signal.aborted || abort !== ctl || listeners.size === 0) return;
    failures++;
    timer = setTimeout(() => {
      timer = null;
      if (abort === ctl && listeners.size > 0) start();
    }, Math.min(10_000, 500 * 2 ** Math.min(5, failures - 1)));
  };
  const start = () => {
    const ctl = new AbortController();
    abort = ctl;
    void run(ctl);
  };
  return (cb) => {
    listeners.add(cb);
    if (listeners.size === 1 && opts.token) start();
    return () => {
      if (!listeners.delete(cb) || listeners.size > 0) return;
      if (timer) clearTimeout(timer);
      timer = null;
      abort?.abort();
      abort = null;
    };
  };
}

/** HoldfastApi over `POST /api/<channel>`; never throws, failures come back as envelopes. */
export function createHttpApi(opts: { token: string | null; baseUrl?: string; fetch?: FetchLike }): HoldfastApi & LiveApi {
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
      if (isEnvelope(body)) return unpackEnvelope(body);
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
  const onEvent = createEventStream({ token: opts.token, ...(opts.baseUrl !== undefined ? { baseUrl: opts.baseUrl } : {}) });
  return Object.assign(api as unknown as HoldfastApi, { onEvent });
}

/**
 * The desktop bridge with its answers unpacked: main sends record lists packed (see
 * src/shared/wirePack.ts), as `holdfast serve` does. Everything else of the bridge as it is.
 */
export function unpackingBridge(bridge: DesktopBridge): ClientApi {
  const api: Record<string, unknown> = { ...bridge };
  for (const op of Object.keys(operations) as Operation[]) {
    const call = bridge[op] as unknown as ((args: unknown) => Promise<Envelope<unknown>>) | undefined;
    if (typeof call === 'function') api[op] = async (args: unknown) => unpackEnvelope(await call(args));
  }
  return api as unknown as ClientApi;
}

/** The transport for this page: the preload bridge in Electron, else loopback HTTP. */
export function resolveApi(win: Window = window): ClientApi {
  if (win.holdfast) return unpackingBridge(win.holdfast);
  return createHttpApi({ token: takeToken(win.location, win.sessionStorage, win.history) });
}

/** Desktop only: the local path of a dropped File; null in a browser (a dropped File has none). */
export function resolvePathForFile(win: Window = window): ((file: File) => string) | null {
  const fn = win.holdfast?.pathForFile;
  return typeof fn === 'function' ? (file) => fn(file) : null;
}
