// The one typed contract between the renderer and the process that owns the nodes
// (Electron main over IPC, or `holdfast serve` over loopback HTTP).
//
// Every channel has an argument schema (validated in main / the server, never trusted from
// the renderer) and a result type. Results and errors travel in one envelope.
import { z } from 'zod';
import type { ErrorInfo, ImageRef, NodeDef, NodeStatus } from './domain';

const name = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" and "-" only');
const absPath = z.string().min(1).max(4096).refine((p) => p.startsWith('/'), 'must be an absolute path');
const localPath = z.string().min(1).max(4096);
const host = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[A-Za-z0-9._:%\[\]-]+$/, 'a host name or IP address');

export const nodeInputSchema = z.strictObject({
  name,
  host,
  port: z.number().int().min(1).max(65535).optional(),
  user: z.string().min(1).max(64).regex(/^[a-z_][a-z0-9_.-]*\$?$/i, 'a user name').optional(),
  identity: localPath.optional(),
  knownHosts: localPath.optional(),
  socket: absPath.optional(),
  imagesDir: absPath.optional(),
  namespace: z.string().min(1).max(76).regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/).optional(),
});

const fingerprint = z.string().regex(/^SHA256:[A-Za-z0-9+/]{43}$/, 'an OpenSSH SHA256 fingerprint');

export const channels = {
  'nodes.list': { args: z.strictObject({}), result: null as unknown as NodeDef[] },
  'nodes.add': { args: z.strictObject({ node: nodeInputSchema }), result: null as unknown as NodeDef },
  'nodes.update': {
    args: z.strictObject({ name, node: nodeInputSchema }),
    result: null as unknown as NodeDef,
  },
  'nodes.remove': { args: z.strictObject({ name }), result: null as unknown as { removed: string } },
  'nodes.connect': { args: z.strictObject({ name }), result: null as unknown as NodeStatus },
  'nodes.trustHostKey': {
    args: z.strictObject({ name, fingerprint }),
    result: null as unknown as { recorded: string },
  },
  'images.list': { args: z.strictObject({ node: name }), result: null as unknown as ImageRef[] },
} as const;

export type Channel = keyof typeof channels;
export type ArgsOf<C extends Channel> = z.infer<(typeof channels)[C]['args']>;
export type ResultOf<C extends Channel> = (typeof channels)[C]['result'];

export type Envelope<T> = { ok: true; result: T } | { ok: false; error: ErrorInfo };

/**
 * Named operations the preload exposes (and the HTTP client mirrors). The renderer never
 * names a channel itself.
 */
export const operations = {
  listNodes: 'nodes.list',
  addNode: 'nodes.add',
  updateNode: 'nodes.update',
  removeNode: 'nodes.remove',
  connectNode: 'nodes.connect',
  trustHostKey: 'nodes.trustHostKey',
  listImages: 'images.list',
} as const satisfies Record<string, Channel>;

export type Operation = keyof typeof operations;
export type HoldfastApi = {
  [O in Operation]: (args: ArgsOf<(typeof operations)[O]>) => Promise<Envelope<ResultOf<(typeof operations)[O]>>>;
};

/** Validate untrusted arguments for a channel; throws a zod error on bad input. */
export function parseArgs<C extends Channel>(channel: C, raw: unknown): ArgsOf<C> {
  return channels[channel].args.parse(raw ?? {}) as ArgsOf<C>;
}

export function isChannel(value: string): value is Channel {
  return Object.prototype.hasOwnProperty.call(channels, value);
}
