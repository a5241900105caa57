// The store's shape: every piece of state and every action, as components see them through
// useStore. Types only, in one place, so each slice (nodes.ts, images.ts, …) can name the whole
// state it reads through get() without importing another slice (no import cycles).
import type { StoreApi } from 'zustand/vanilla';
import type { ArgsOf, Envelope, LiveEvent, NodeLiveStatus, ResultOf } from '../../shared/contract';
import type { FleetNodeResult, FleetReport } from '../../shared/fleet';
import type { DiskPicture } from '../../shared/diskPicture';
import type { PrunePlan, PruneResult } from '../../shared/prunePlan';
import type { NeedsReport } from '../../shared/needs';
import type { EmbeddedRegistryConfig } from '../../shared/embeddedRegistry';
import type { ArchiveInfo, LocalArchive, RemovalCheck } from '../../shared/domain/archives';
import type { AuditEntry } from '../../shared/domain/audit';
import type { CredentialRequest, NodeStatus } from '../../shared/domain/connection';
import type { ErrorInfo } from '../../shared/domain/errors';
import type { ImageRef } from '../../shared/domain/images';
import type { Job } from '../../shared/domain/jobs';
import type { LostPin } from '../../shared/domain/lostPins';
import type { NodeDef, NodeInput } from '../../shared/domain/nodes';
import type { PinPlan, PinTarget } from '../../shared/domain/pins';
import type { ArchiveSignatureCheck } from '../../shared/signatures';

/** One per-node list loaded from the node: images, archives or the audit log. */
export interface ListState<T> {
  state: 'idle' | 'loading' | 'ready' | 'error';
  items: T[];
  error?: ErrorInfo;
  loadedAt?: number;
}

/**
 * A node's images, each with its site-need verdict (ImageRef.need), and the node's NeedsReport
 * (images.report): where the needs come from and the needed images it lacks. Absent or null
 * until a report carried one.
 */
export interface ImagesState extends ListState<ImageRef> {
  needs?: NeedsReport | null;
  /** k3s's embedded registry as the node's config says (each reference then carries `peers`). */
  embeddedRegistry?: EmbeddedRegistryConfig | null;
}
export type ArchivesState = ListState<ArchiveInfo>;
export type AuditState = ListState<AuditEntry>;
export type LostPinsState = ListState<LostPin>;

/** A node's disk picture; `full` once it includes the image store and the GC forecast. */
export interface DiskState {
  state: 'idle' | 'loading' | 'ready' | 'error';
  picture?: DiskPicture;
  error?: ErrorInfo;
  loadedAt?: number;
  full: boolean;
}

/** Pins found lost while the app was watching (live `pins.lost` events), newest last, until dismissed. */
export interface PinAlert {
  id: number;
  node: string;
  lost: LostPin[];
  /** When the event arrived (ms since epoch). */
  at: number;
}

export type PinAction = 'pin' | 'unpin';

/** One archive chosen in the import wizard, and what inspecting it on this machine found. */
export interface DraftArchive {
  path: string;
  state: 'inspecting' | 'ok' | 'refused' | 'error';
  archive?: LocalArchive;
  error?: ErrorInfo;
}

/** What checking an archive's signatures found, or why it could not be checked. */
export type SignatureCheckState = { ok: true; check: ArchiveSignatureCheck } | { ok: false; error: ErrorInfo };

/**
 * The wizard's signature verification (#48): the key and bundle files on this machine, the last
 * check per archive path (cleared when the files change), and whether unverified images go too.
 */
export interface WizardSignatures {
  keys: string[];
  bundles: string[];
  allowUnsigned: boolean;
  checking: boolean;
  checks: Record<string, SignatureCheckState>;
}

export type SignatureFileKind = 'keys' | 'bundles';

export type WizardStep = 'choose' | 'review' | 'nodes' | 'run' | 'summary';

/** The import wizard lives in the store so it keeps its step while the user looks at a node. */
export interface ImportWizardState {
  step: WizardStep;
  archives: DraftArchive[];
  nodes: string[];
  /**
   * The user chose the nodes (ticked, unticked, "select all") or the wizard was given them: the
   * nodes step then keeps `nodes` as they are instead of preselecting every reachable node.
   */
  nodesChosen: boolean;
  pin: boolean;
  removeArchive: boolean;
  /**
   * Straight into each node's containerd (only the blobs it lacks, pinned durably, no file on the
   * node) instead of through the images dir; pin and removeArchive then follow the shared rule.
   */
  direct: boolean;
  /** The jobs this wizard started, one per archive (a re-run replaces its archive's job). */
  jobIds: string[];
  /** startImport calls refused before any job existed (e.g. the archive changed since review). */
  startErrors: { path: string; error: ErrorInfo }[];
  starting: boolean;
  signatures: WizardSignatures;
}

/** Optional capabilities of the desktop bridge (absent in the browser UI). */
export interface StoreEnv {
  /** Local path of a dropped File (Electron's webUtils.getPathForFile, through the preload). */
  pathForFile?: ((file: File) => string) | null;
  /** Poll intervals for jobs.list (ms): while something runs, and otherwise. */
  pollRunningMs?: number;
  pollIdleMs?: number;
  /** Quiet time after a node.changed event before the node's views reload (ms). */
  refreshDebounceMs?: number;
}

/** A node's live watcher as last reported, with when its next retry is due (ms since epoch). */
export type LiveView = NodeLiveStatus & { retryAt?: number };

export type View = 'fleet' | 'matrix' | 'node' | 'import';

/**
 * The fleet matrix's inspection: the run in progress (results as nodes answer) and the last
 * full report. Secrets never live here.
 */
export interface FleetRunState {
  state: 'idle' | 'starting' | 'running' | 'done' | 'error';
  runId: string | null;
  /** The nodes the run covers, in report order. */
  nodes: string[];
  /** Results received so far (fleet.node events), by node. */
  results: Record<string, FleetNodeResult>;
  report: FleetReport | null;
  error?: ErrorInfo;
  /** The group the run was limited to ('' = every node). */
  group: string;
}

export interface AppState {
  nodes: NodeDef[];
  nodesState: 'loading' | 'ready' | 'error';
  nodesError?: ErrorInfo;
  statuses: Record<string, NodeStatus>;
  images: Record<string, ImagesState>;
  archives: Record<string, ArchivesState>;
  audit: Record<string, AuditState>;
  /** Durable pins Holdfast made that are gone, per node (loaded with the node's images). */
  lostPins: Record<string, LostPinsState>;
  /** Disk pictures per node (the Disk tab loads the full one, the fleet overview only file systems). */
  disk: Record<string, DiskState>;
  pinAlerts: PinAlert[];
  selected: string | null;
  /** What the main area shows: the fleet overview, the selected node, or the import wizard. */
  view: View;
  /** Live watcher state per node (from node.status events); absent: no watcher. */
  live: Record<string, LiveView>;
  wizard: ImportWizardState;
  jobs: Job[];
  jobsState: 'idle' | 'loading' | 'ready' | 'error';
  jobsError?: ErrorInfo;
  jobsOpen: boolean;
  /** Desktop only: the local path of a dropped file; null in the browser UI. */
  pathForFile: ((file: File) => string) | null;
  /**
   * Open credential requests, oldest first (what is asked, never what was answered: answers
   * live only in the dialog's inputs until sent).
   */
  credentials: CredentialRequest[];
  fleetRun: FleetRunState;

  init(): Promise<void>;
  /** Requests opened before this window listened (or whose event was missed): merged into the queue. */
  loadPendingCredentials(): Promise<void>;
  /** Send the answers (null = Cancel) for one request and drop it from the queue; nothing is kept. */
  answerCredentials(id: string, answers: string[] | null): Promise<ErrorInfo | null>;
  /** The fleet matrix view; loads the last report when there is none yet. */
  showMatrix(): void;
  loadLastFleetReport(): Promise<void>;
  /** The last report as a file (HTML, CSV or JSON); the content is not kept in the store. */
  exportFleetReport(format: ArgsOf<'fleet.export'>['format']): Promise<Envelope<{ filename: string; mime: string; content: string }>>;
  /** A pin set of the selected images: saved through the app's dialog, or handed back to download (serve). */
  savePinSet(args: ArgsOf<'pinset.save'>): Promise<Envelope<ResultOf<'pinset.save'>>>;
  /** Inspect every node, or one group's. */
  startFleet(group?: string): Promise<ErrorInfo | null>;
  select(name: string): void;
  /** The fleet overview: every node with its counts; loads images of connected nodes. */
  showFleet(): void;
  /** Connect every node that is not connected (or connecting) yet. */
  connectAll(): Promise<void>;
  /** Follow live events (no-op without a transport for them); returns the stop function. */
  startLive(): () => void;
  /** Apply one live event (exposed for tests). */
  applyEvent(e: LiveEvent): void;
  connect(name: string): Promise<void>;
  /** Forget the connection outcome (e.g. the user declined a host key): back to "not connected". */
  resetStatus(name: string): void;
  trustAndConnect(name: string, fingerprint: string): Promise<ErrorInfo | null>;
  loadImages(name: string): Promise<void>;
  loadArchives(name: string): Promise<void>;
  loadAudit(name: string): Promise<void>;
  loadLostPins(name: string): Promise<void>;
  /** The node's disk picture; images: false asks only for file systems and thresholds (never replaces a full one). */
  loadDisk(name: string, opts?: { images?: boolean }): Promise<void>;
  /** What prune would remove (nothing changes). */
  planPrune(node: string, keepVersions: number): Promise<Envelope<PrunePlan>>;
  /** Removes the previewed images (by key) the node still allows; refreshes the node's views. */
  applyPrune(node: string, keepVersions: number, images: string[], confirm: string): Promise<Envelope<PruneResult>>;
  dismissPinAlert(id: number): void;
  /** After a change on the node: reload images, and archives and log if they were shown. */
  refreshNode(name: string): Promise<void>;
  /** Previews (nothing changes on the node). requestPinPlan asks the planPins operation ('pins.plan'). */
  requestPinPlan(node: string, action: PinAction, target: PinTarget): Promise<Envelope<PinPlan>>;
  checkArchiveRemoval(node: string, path: string): Promise<Envelope<RemovalCheck>>;
  /** Changes; each refreshes the node's views afterwards, whatever the outcome. */
  applyPinsAndRefresh(node: string, action: PinAction, target: PinTarget): Promise<Envelope<PinPlan>>;
  removeArchive(node: string, path: string, force?: { confirm: string }): Promise<Envelope<AuditEntry>>;
  addNode(input: NodeInput): Promise<ErrorInfo | null>;
  updateNode(name: string, input: NodeInput): Promise<ErrorInfo | null>;
  removeNode(name: string): Promise<ErrorInfo | null>;

  openImport(): void;
  closeImport(): void;
  /** Start over with an empty wizard (the jobs it started keep running in the jobs panel). */
  resetImport(): void;
  setWizard(patch: Partial<Pick<ImportWizardState, 'step' | 'nodes' | 'pin' | 'removeArchive' | 'direct'>>): void;
  /** Add archives by path (deduplicated) and inspect each on this machine. */
  addArchivePaths(paths: string[]): void;
  removeArchivePath(path: string): void;
  /** The native file dialog (desktop); resolves to the error when there is none. */
  pickArchives(): Promise<ErrorInfo | null>;
  /** Add key or bundle files by path (deduplicated); the last check no longer holds. */
  addSignatureFiles(kind: SignatureFileKind, paths: string[]): void;
  removeSignatureFile(kind: SignatureFileKind, path: string): void;
  /** The native file dialog for keys or bundles (desktop); resolves to the error when there is none. */
  pickSignatureFiles(kind: SignatureFileKind): Promise<ErrorInfo | null>;
  /** Every readable archive's images checked against the files on this machine; nothing is sent. */
  checkSignatures(): Promise<void>;
  setAllowUnsigned(on: boolean): void;
  /** One startImport per archive that passed inspection; moves the wizard to "run". */
  startImports(): Promise<void>;
  /** Start a job's archive again on the nodes that failed (the import is idempotent). */
  retryJob(id: string): Promise<ErrorInfo | null>;
  loadJobs(): Promise<void>;
  cancelJob(id: string): Promise<ErrorInfo | null>;
  setJobsOpen(open: boolean): void;
  /** Poll jobs.list (fast while anything runs, slowly otherwise); returns a stop function. */
  startJobPolling(): () => void;
}

export type AppStore = StoreApi<AppState>;
