// Import jobs: the jobs list (polled, fast while something runs, and merged from live events),
// the jobs panel, cancelling a job and retrying its failed nodes.
import { isJobFinished } from '../../shared/jobState';
import { nodesToRetry } from '../model/jobs';
import type { StoreContext } from './context';
import type { AppState } from './types';

export function createJobsSlice(ctx: StoreContext): Pick<
  AppState,
  | 'jobs'
  | 'jobsState'
  | 'jobsOpen'
  | 'retryJob'
  | 'loadJobs'
  | 'cancelJob'
  | 'setJobsOpen'
  | 'startJobPolling'
> {
  const { api, set, get, upsertJob, afterJobsChanged, pollRunningMs, pollIdleMs } = ctx;
  return {
    jobs: [],
    jobsState: 'idle',
    jobsOpen: false,

    async retryJob(id) {
      const job = get().jobs.find((j) => j.id === id);
      if (!job) return { code: 'NOT_FOUND', message: 'That job is no longer listed.' };
      const nodes = nodesToRetry(job).filter((n) => get().nodes.some((d) => d.name === n));
      if (nodes.length === 0) return { code: 'INVALID_INPUT', message: 'No failed node of this job is still configured.' };
      const { pin, removeArchive, direct } = job.options;
      const env = await api.startImport({ nodes, path: job.archive.path, pin, removeArchive, ...(direct ? { direct: true } : {}) });
      if (!env.ok) return env.error;
      upsertJob(env.result);
      set((s) =>
        s.wizard.jobIds.includes(id)
          ? { wizard: { ...s.wizard, jobIds: s.wizard.jobIds.map((j) => (j === id ? env.result.id : j)), step: 'run' } }
          : {},
      );
      ctx.pollKick?.();
      return null;
    },
    async loadJobs() {
      const seq = ++ctx.jobsSeq;
      if (get().jobsState === 'idle') set({ jobsState: 'loading' });
      const env = await api.listJobs({});
      if (seq !== ctx.jobsSeq) return;
      if (!env.ok) {
        set({ jobsState: 'error', jobsError: env.error });
        return;
      }
      const before = new Map(get().jobs.map((j) => [j.id, j]));
      set({ jobs: env.result, jobsState: 'ready', jobsError: undefined });
      afterJobsChanged(before);
    },
    async cancelJob(id) {
      const env = await api.cancelJob({ id });
      if (!env.ok) return env.error;
      upsertJob(env.result);
      ctx.pollKick?.();
      return null;
    },
    setJobsOpen(open) {
      set({ jobsOpen: open });
      if (open) ctx.pollKick?.();
    },
    startJobPolling() {
      let stopped = false;
      let timer: ReturnType<typeof setTimeout> | null = null;
      let inFlight = false;
      const tick = async () => {
        if (stopped || inFlight) return;
        inFlight = true;
        if (timer) clearTimeout(timer);
        timer = null;
        try {
          await get().loadJobs();
        } finally {
          inFlight = false;
        }
        if (stopped) return;
        const running = get().jobs.some((j) => !isJobFinished(j.state));
        timer = setTimeout(() => void tick(), running ? pollRunningMs : pollIdleMs);
      };
      const kick = () => void tick();
      ctx.pollKick = kick;
      void tick();
      return () => {
        stopped = true;
        if (timer) clearTimeout(timer);
        if (ctx.pollKick === kick) ctx.pollKick = null;
      };
    },
  };
}
