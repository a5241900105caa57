// The jobs the wizard started, in the wizard's order (undefined until the jobs list has one),
// shared by the run and summary steps.
import { useMemo } from 'react';
import type { Job } from '../../../shared/domain/jobs';
import { useApp } from '../../context';

export function useWizardJobs(): (Job | undefined)[] {
  const jobIds = useApp((s) => s.wizard.jobIds);
  const jobs = useApp((s) => s.jobs);
  return useMemo(() => jobIds.map((id) => jobs.find((j) => j.id === id)), [jobIds, jobs]);
}
