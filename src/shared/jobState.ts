// When a job (or one node of it) is over: the one rule the jobs panel, the wizard and the store read.
import type { JobState } from './domain/jobs';

export function isJobFinished(state: JobState): boolean {
  return state === 'succeeded' || state === 'failed' || state === 'cancelled';
}
