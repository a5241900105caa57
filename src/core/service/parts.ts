// What the service's concerns share, built once by the composition root (./index.ts) and handed
// to each concern's handlers (./nodes.ts, ./images.ts, ./jobs.ts, ./fleet.ts, ./disk.ts), plus
// the types the service's callers import (Service, ServiceOptions).
import type { LiveEvent } from '../../shared/contract';
import type { NodeDef } from '../../shared/domain/nodes';
import type { RemedyWording } from '../../shared/remedy';
import type { Handlers } from '../../shared/handlers';
import type { IndexCache } from '../archives/scan';
import type { AuditLog } from '../audit/log';
import type { NodeStore } from '../config/nodes';
import type { CredentialBroker } from '../credentials/broker';
import type { JobManager } from '../jobs/manager';
import type { TaskRunner } from '../jobs/tasks';
import type { LiveHub } from '../live';
import type { OpenSession, SessionPool } from '../node/pool';
import type { CredentialsProvider } from '../ssh/credentials';
import type { OpsContext } from '../usecases/inventory';

export interface Service extends Handlers {
  /** Live events (node.status, node.changed, jobs.changed, fleet.node/done, local.inspect, credentials.request); node watchers run while someone listens. */
  events: { subscribe(cb: (e: LiveEvent) => void): () => void };
  dispose(): Promise<void>;
}

export interface ServiceOptions {
  home?: string;
  /** A native "open files" dialog; only the desktop app has one. */
  pickArchives?: () => Promise<string[]>;
  /**
   * A native "save file" dialog writing `content` where the user chose (the path; null when
   * cancelled); only the desktop app has one. Without it, files are handed back to download.
   */
  saveFile?: (file: { title: string; filename: string; content: string }) => Promise<string | null>;
  /** A native "open files" dialog for cosign public keys or detached signature bundles (#48). */
  pickSignatureFiles?: (kind: 'keys' | 'bundles') => Promise<string[]>;
  /** Opens node sessions (default: NodeSession.open over SSH); UI tests pass fake nodes here. */
  openSession?: OpenSession;
  /**
   * These nodes instead of the home's nodes.json, none added or changed (`--local`: this machine,
   * whose session openSession opens). The audit log and caches stay the home's.
   */
  nodes?: readonly NodeDef[];
  /**
   * Who answers a node's secrets (passphrases, passwords, keyboard-interactive). Absent (the
   * app, `serve`): the UI is asked through credentials.request events. The CLI asks on its terminal.
   */
  credentials?: CredentialsProvider;
  /**
   * Minimum spacing of jobs.changed per running job (default 200 ms, what a window needs). The
   * CLI, in process, passes 0: it shows every phase a job goes through.
   */
  jobThrottleMs?: number;
  /**
   * false: a fleet run never asks for a secret (a node that needs one is AUTH_FAILED) — the CLI,
   * whose one terminal cannot answer many nodes at once. Default: it asks like any connection.
   */
  fleetCredentials?: boolean;
  /**
   * How fleet.export's HTML report words a remedy: the CLI's command lines (src/cli/remedyText),
   * which the app and `serve` pass. Without it the report names no command (core words none).
   */
  remedyCommand?: RemedyWording;
}

/** The handlers of some channels (one concern's share of the contract). */
export type HandlersOf<C extends keyof Handlers> = Pick<Handlers, C>;

export interface ServiceParts {
  opts: ServiceOptions;
  store: NodeStore;
  pool: SessionPool;
  audit: AuditLog;
  indexCache: IndexCache;
  /** The audit log, the archive index cache and the needs resolver, as the use cases take them. */
  ctx: OpsContext;
  broker: CredentialBroker;
  /** Who answers secrets: opts.credentials, else the broker (the UI). */
  credentials: CredentialsProvider;
  /** Every long-running piece of work: jobs (through `jobs`) and fleet runs. */
  tasks: TaskRunner;
  jobs: JobManager;
  live: LiveHub;
  emit(e: LiveEvent): void;
  /** Aborted by dispose: what the service still reads on this machine stops with it. */
  disposing: AbortSignal;
  pinChanges: PinChanges;
}

/**
 * Nodes whose pins this service is changing right now: the lost-pin watch waits for them, so
 * Holdfast's own unpin (labels first, audit entry right after) is never reported as a loss.
 */
export class PinChanges {
  private readonly changing = new Map<string, number>();

  busy(node: string): boolean {
    return this.changing.has(node);
  }

  async during<T>(node: string, fn: () => Promise<T>): Promise<T> {
    this.changing.set(node, (this.changing.get(node) ?? 0) + 1);
    try {
      return await fn();
    } finally {
      const n = (this.changing.get(node) ?? 1) - 1;
      if (n > 0) this.changing.set(node, n);
      else this.changing.delete(node);
    }
  }
}
