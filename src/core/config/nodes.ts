// The node inventory: $HOLDFAST_HOME/nodes.json, validated on every read, written atomically.
// Every change is a read-modify-write under the file's lock (config/lock.ts), re-reading inside
// it, so concurrent CLI and app changes all land or fail clearly (a name taken meanwhile: CONFLICT).
import { promises as fs } from 'node:fs';
import path from 'node:path';
import * as z from 'zod';
import { nodeInputSchema } from '../../shared/contract';
import { NODE_DEFAULTS, type ImagesDirDetection, type NodeDef, type NodeInput } from '../../shared/domain/nodes';
import { errnoClause, HoldfastError } from '../errors';
import { writeFileAtomic } from './atomic';
import { withFileLock } from './lock';
import { defaultKnownHosts } from './home';

const fileSchema = z.object({
  version: z.literal(1),
  nodes: z.array(nodeInputSchema),
});

export function completeNode(input: NodeInput, env: NodeJS.ProcessEnv = process.env): NodeDef {
  const parsed = nodeInputSchema.parse(input);
  const def: NodeDef = {
    name: parsed.name,
    host: parsed.host,
    port: parsed.port ?? NODE_DEFAULTS.port,
    user: parsed.user ?? NODE_DEFAULTS.user,
    knownHosts: parsed.knownHosts ? path.resolve(parsed.knownHosts) : defaultKnownHosts(env),
    socket: parsed.socket ?? NODE_DEFAULTS.socket,
    imagesDir: parsed.imagesDir ?? NODE_DEFAULTS.imagesDir,
    namespace: parsed.namespace ?? NODE_DEFAULTS.namespace,
  };
  const source = imagesDirSourceOf(parsed);
  if (source) def.imagesDirSource = source;
  if (parsed.identity) def.identity = path.resolve(parsed.identity);
  if (parsed.group) def.group = parsed.group;
  if (parsed.sudo) def.sudo = true;
  if (parsed.jump) {
    if (parsed.jump === parsed.name) throw new HoldfastError('INVALID_INPUT', `node ${parsed.name} cannot jump through itself`);
    def.jump = parsed.jump;
  }
  if (parsed.auth && parsed.auth !== 'publickey') def.auth = parsed.auth;
  if (parsed.k8sNode) def.k8sNode = parsed.k8sNode;
  return def;
}

/**
 * Whether the images dir was the user's choice. Entries written before the source was recorded
 * always carried a path (the CLI sent k3s's default when none was given), so one equal to k3s's
 * default counts as not chosen, any other as explicit.
 */
function imagesDirSourceOf(input: NodeInput): NodeDef['imagesDirSource'] {
  if (input.imagesDir === undefined) return undefined;
  if (input.imagesDirSource) return input.imagesDirSource;
  return input.imagesDir === NODE_DEFAULTS.imagesDir ? undefined : 'explicit';
}

/**
 * The node with the images dir its distro reports (from the probe), or null when nothing
 * changes: never over an explicit one, and an uncertain answer (the distro's default because a
 * config file could not be read or parsed) never replaces an earlier detection.
 */
export function adoptImagesDir(def: NodeDef, det: ImagesDirDetection | undefined): NodeDef | null {
  if (!det || def.imagesDirSource === 'explicit') return null;
  if (def.imagesDirSource === 'detected') {
    if (def.imagesDir === det.imagesDir) return null;
    if (det.from === 'default' && det.notes.length > 0) return null;
  }
  return { ...def, imagesDir: det.imagesDir, imagesDirSource: 'detected' };
}

function sameNode(a: NodeDef, b: NodeDef): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)] as (keyof NodeDef)[]);
  return [...keys].every((k) => a[k] === b[k]);
}

export class NodeStore {
  readonly file: string;

  constructor(home: string) {
    this.file = path.join(home, 'nodes.json');
  }

  async list(): Promise<NodeDef[]> {
    let text: string;
    try {
      text = await fs.readFile(this.file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw new HoldfastError('INTERNAL', `cannot read ${this.file}: ${errnoClause(e)}`, {
        hint: 'Make it a file you can read (or move it away to start a new node list).',
        cause: e,
      });
    }
    let data: z.infer<typeof fileSchema>;
    try {
      data = fileSchema.parse(JSON.parse(text));
    } catch (e) {
      throw new HoldfastError('INTERNAL', `${this.file} is not a valid Holdfast node list`, {
        hint: 'Fix or remove the file; Holdfast never rewrites a file it cannot read.',
        cause: e,
      });
    }
    // Every change finds a node by its name: two entries of one name would make `node rm`
    // remove both and `node edit` change the first, so such a file is refused like any other.
    const seen = new Set<string>();
    for (const n of data.nodes) {
      if (seen.has(n.name)) {
        throw new HoldfastError('INTERNAL', `${this.file} names the node "${n.name}" twice`, {
          hint: 'Edit the file: remove or rename one of the two entries. Holdfast never rewrites a file it cannot read.',
        });
      }
      seen.add(n.name);
    }
    return data.nodes.map((n) => completeNode(n));
  }

  async get(name: string): Promise<NodeDef> {
    const node = (await this.list()).find((n) => n.name === name);
    if (!node) {
      throw new HoldfastError('NOT_FOUND', `no node named "${name}"`, { hint: 'Name one of the configured nodes, or add this one.', remedy: { action: 'node-list', purpose: 'add' } });
    }
    return node;
  }

  async add(input: NodeInput): Promise<NodeDef> {
    const def = completeNode(input);
    return this.change(async (nodes) => {
      if (nodes.some((n) => n.name === def.name)) {
        throw new HoldfastError('CONFLICT', `a node named "${def.name}" already exists`, { hint: 'Choose another name, or edit the existing node.' });
      }
      await this.save([...nodes, def]);
      return def;
    });
  }

  /**
   * Adds several nodes in one atomic write: every input is validated and checked against the
   * store and the others first, so a bad line leaves nodes.json untouched.
   */
  async addMany(inputs: NodeInput[]): Promise<NodeDef[]> {
    return this.change((nodes) => this.addManyTo(nodes, inputs));
  }

  private async addManyTo(nodes: NodeDef[], inputs: NodeInput[]): Promise<NodeDef[]> {
    const taken = new Set(nodes.map((n) => n.name));
    const defs: NodeDef[] = [];
    for (const input of inputs) {
      const def = completeNode(input);
      if (taken.has(def.name)) {
        throw new HoldfastError('CONFLICT', `a node named "${def.name}" already exists`, { hint: 'Choose another name, or edit the existing node.' });
      }
      taken.add(def.name);
      defs.push(def);
    }
    if (defs.length) await this.save([...nodes, ...defs]);
    return defs;
  }

  /**
   * Replaces the node. With `expect` (the node as the caller read it before deciding on the
   * change), refuses with CONFLICT when someone changed it meanwhile, instead of undoing their
   * change with a stale copy.
   */
  async update(name: string, input: NodeInput, opts: { expect?: NodeDef } = {}): Promise<NodeDef> {
    return this.change((nodes) => this.updateIn(nodes, name, input, opts.expect));
  }

  private async updateIn(nodes: NodeDef[], name: string, input: NodeInput, expect: NodeDef | undefined): Promise<NodeDef> {
    const i = nodes.findIndex((n) => n.name === name);
    if (i < 0) throw new HoldfastError('NOT_FOUND', `no node named "${name}"`);
    if (expect && !sameNode(nodes[i]!, expect)) {
      throw new HoldfastError('CONFLICT', `node "${name}" was changed by another Holdfast meanwhile; nothing was saved`, { hint: 'Look at the node again, then run the edit again.', remedy: { action: 'node-list', purpose: 'edit-again' } });
    }
    // An edit that leaves the images dir as it was (the app's form sends every field) keeps
    // whether it was detected, so later connections can still follow the node's data-dir.
    const before = nodes[i]!;
    const keep = input.imagesDirSource === undefined && input.imagesDir === before.imagesDir && before.imagesDirSource;
    const def = completeNode(keep ? { ...input, imagesDirSource: before.imagesDirSource } : input);
    if (def.name !== name && nodes.some((n) => n.name === def.name)) {
      throw new HoldfastError('CONFLICT', `a node named "${def.name}" already exists`);
    }
    nodes[i] = def;
    await this.save(nodes);
    return def;
  }

  /** Records the images dir a connection detected (see adoptImagesDir); the new def, or null if unchanged. */
  async adoptImagesDir(name: string, det: ImagesDirDetection | undefined): Promise<NodeDef | null> {
    return this.change(async (nodes) => {
      const i = nodes.findIndex((n) => n.name === name);
      if (i < 0) throw new HoldfastError('NOT_FOUND', `no node named "${name}"`);
      const next = adoptImagesDir(nodes[i]!, det);
      if (!next) return null;
      nodes[i] = next;
      await this.save(nodes);
      return next;
    });
  }

  async remove(name: string): Promise<void> {
    return this.change(async (nodes) => {
      if (!nodes.some((n) => n.name === name)) throw new HoldfastError('NOT_FOUND', `no node named "${name}"`);
      await this.save(nodes.filter((n) => n.name !== name));
    });
  }

  /** fn gets the list as it is now, read under the lock; it may save once before returning. */
  private change<T>(fn: (nodes: NodeDef[]) => Promise<T>): Promise<T> {
    return withFileLock(this.file, async () => fn(await this.list()));
  }

  private async save(nodes: NodeDef[]): Promise<void> {
    await writeFileAtomic(this.file, JSON.stringify({ version: 1, nodes }, null, 2) + '\n');
  }
}
