import { logger } from '../../log';

const log = logger('upload');
// Progress reporting for uploads: a transfer rate smoothed over a ~2 s window, an ETA from it,
// and a throttle so listeners (IPC to the renderer, a CLI progress line) see at most ~10 updates
// a second. The clock is injectable so the arithmetic is unit-tested without timers.

export type UploadPhase = 'checking' | 'uploading' | 'verifying' | 'renaming';

export interface UploadProgress {
  bytesDone: number;
  bytesTotal: number;
  /** Bytes per second, averaged over the last ~2 s. */
  rate: number;
  /** Seconds left at that rate; null while the rate is unknown (or zero). */
  eta: number | null;
  phase: UploadPhase;
}

export interface ProgressMeterOptions {
  bytesTotal: number;
  onProgress?: (p: UploadProgress) => void;
  /** Smoothing window, default 2000 ms. */
  windowMs?: number;
  /** Minimum time between two reports of the same phase, default 100 ms. */
  minIntervalMs?: number;
  now?: () => number;
}

export class ProgressMeter {
  private readonly samples: { t: number; bytes: number }[] = [];
  private readonly windowMs: number;
  private readonly minIntervalMs: number;
  private readonly now: () => number;
  private lastEmit = -Infinity;
  private lastPhase: UploadPhase | null = null;
  private bytesDone = 0;
  private phase: UploadPhase = 'checking';

  constructor(private readonly opts: ProgressMeterOptions) {
    this.windowMs = opts.windowMs ?? 2000;
    this.minIntervalMs = opts.minIntervalMs ?? 100;
    this.now = opts.now ?? (() => performance.now());
  }

  /** Starts a phase; always reported (phase changes are rare and matter to the listener). */
  setPhase(phase: UploadPhase, bytesDone = this.bytesDone): void {
    this.phase = phase;
    this.bytesDone = bytesDone;
    if (phase === 'uploading') {
      // The rate is about bytes moving now, not the resumed prefix.
      this.samples.length = 0;
      this.samples.push({ t: this.now(), bytes: bytesDone });
    }
    this.emit(true);
  }

  /** New total of bytes done; reported if the throttle allows. */
  update(bytesDone: number): void {
    this.bytesDone = bytesDone;
    const t = this.now();
    this.samples.push({ t, bytes: bytesDone });
    // Keep one sample at or before the window start so the window is always fully covered.
    while (this.samples.length > 2 && this.samples[1]!.t <= t - this.windowMs) this.samples.shift();
    this.emit(false);
  }

  /** Reports the current state regardless of the throttle (e.g. the last byte). */
  flush(): void {
    this.emit(true);
  }

  snapshot(): UploadProgress {
    const rate = this.rate();
    const left = Math.max(0, this.opts.bytesTotal - this.bytesDone);
    return {
      bytesDone: this.bytesDone,
      bytesTotal: this.opts.bytesTotal,
      rate,
      eta: left === 0 ? 0 : rate > 0 ? left / rate : null,
      phase: this.phase,
    };
  }

  private rate(): number {
    if (this.phase !== 'uploading' || this.samples.length < 2) return 0;
    const first = this.samples[0]!;
    const last = this.samples[this.samples.length - 1]!;
    const dt = (last.t - first.t) / 1000;
    return dt > 0 ? (last.bytes - first.bytes) / dt : 0;
  }

  private emit(force: boolean): void {
    const cb = this.opts.onProgress;
    if (!cb) return;
    const t = this.now();
    if (!force && this.lastPhase === this.phase && t - this.lastEmit < this.minIntervalMs) return;
    this.lastEmit = t;
    this.lastPhase = this.phase;
    try {
      cb(this.snapshot());
    } catch (err) {
      // a listener's bug must not break the transfer
      log.debug('progress listener failed', { err });
    }
  }
}

/**
 * An upload's progress as the patch of a job's node row (JobNodeProgress): the phase names the
 * import reports, with `message` telling the upload's own steps apart (the images dir checked,
 * the rename into place). The one mapping for both kinds of job: an upload (jobs.startUpload)
 * and the upload step of an import (../import/run.ts); the CLI words its rows from it.
 */
export function uploadJobPatch(p: UploadProgress): {
  phase: 'checking' | 'uploading' | 'verifying';
  message: 'checking' | 'uploading' | 'verifying SHA-256 on the node' | 'renaming';
  bytesDone: number;
  bytesTotal: number;
  rate: number;
  eta: number | null;
} {
  const base = { bytesDone: p.bytesDone, bytesTotal: p.bytesTotal, rate: p.rate, eta: p.eta };
  switch (p.phase) {
    case 'checking':
      return { ...base, phase: 'checking', message: 'checking' };
    case 'uploading':
      return { ...base, phase: 'uploading', message: 'uploading' };
    case 'verifying':
      return { ...base, phase: 'verifying', message: 'verifying SHA-256 on the node' };
    case 'renaming':
      return { ...base, phase: 'verifying', message: 'renaming' };
  }
}
